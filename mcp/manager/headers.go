package manager

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/mcp/catalog"
)

// toolDropped reports a tool go-sdk left out of the server's tool list
// because its x-mcp-header annotations are invalid (connect.Options.
// ToolDropped): a server warning, so the person knows why a tool the
// server lists is missing. Both strings are the server's text.
func (s *server) toolDropped(tool, why string) {
	name := catalog.Label(s.cfg.Name)
	s.m.log.Warn("mcp tool dropped: invalid x-mcp-header", zap.String("server", s.cfg.Name), zap.String("tool", tool), zap.String("why", why))
	s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: tool %s was left out, its x-mcp-header annotations are invalid: %s",
		name, catalog.Label(tool), catalog.Strip(why)))
}
