package acp

import (
	"context"
	"time"

	"github.com/kin-dev/kin/rpc"
)

// maxResourceWait bounds reading one resource_link from its server.
const maxResourceWait = 30 * time.Second

// serverResource reads uri from the connected MCP server it belongs to: the
// session's own servers (those the client passed) first, then kin's
// configured ones. The text comes framed as the server's untrusted data
// and cut to its limits; server is "" when no server offers uri.
func (s *Server) serverResource(ctx context.Context, ss *session, uri string) (text, server string, err error) {
	// The servers start (once) before a prompt's turn; a link needs them
	// settled now, launch approvals asked in this session.
	s.startMCP(ctx, ss)
	s.mu.Lock()
	conn := s.mcp
	s.mu.Unlock()
	ss.mu.Lock()
	own := ss.mcp
	ss.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, maxResourceWait)
	defer cancel()
	for _, m := range []*rpc.MCPServers{own, conn} {
		if m == nil {
			continue
		}
		if name := m.ResourceOwner(ctx, uri); name != "" {
			text, err := m.ReadResource(ctx, ss.id, name, uri)
			return text, name, err
		}
	}
	return "", "", nil
}
