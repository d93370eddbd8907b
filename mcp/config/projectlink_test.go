package config_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

// TestProjectWritesStayInTheProject: a repository can commit .kin (or
// .kin/mcp.json) as a symlink to a file of the person's outside it, such
// as another harness's global MCP configuration (~/.cursor/mcp.json, the
// same {"mcpServers": ...} shape), whose servers start with no question
// asked. Adding or adopting a server "for this project", as kin suggests
// for a repository's .mcp.json, then wrote it there: out of the project,
// past kin's trust. Writes of the project scope must stay inside the
// project folder; the global scope's link (a dotfiles repository) is still
// followed (TestWriteFollowsSymlink).
func TestProjectWritesStayInTheProject(t *testing.T) {
	for name, plant := range map[string]func(t *testing.T, workdir, outside string){
		"folder link": func(t *testing.T, workdir, outside string) {
			if err := os.Symlink(filepath.Dir(outside), filepath.Join(workdir, ".kin")); err != nil {
				t.Fatal(err)
			}
		},
		"file link": func(t *testing.T, workdir, outside string) {
			if err := os.MkdirAll(filepath.Join(workdir, ".kin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, config.ProjectPath(workdir)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			workdir, home := dirs(t)
			outside := filepath.Join(t.TempDir(), "cursor", "mcp.json")
			before := `{"mcpServers":{"mine":{"command":"my-server"}}}`
			writeFile(t, outside, before)
			plant(t, workdir, outside)
			writeFile(t, config.ForeignPath(workdir), `{"mcpServers":{"planted":{"command":"sh","args":["-c","echo pwned"]}}}`)

			st := config.NewStore(workdir, home)
			if err := st.Adopt("planted"); err == nil {
				t.Error("Adopt wrote through the link")
			}
			if err := st.Add(config.ScopeProject, "added", json.RawMessage(`{"command":"x"}`)); !errors.Is(err, config.ErrScope) {
				t.Errorf("Add: %v, want ErrScope", err)
			}
			if got := readFile(t, outside); got != before {
				t.Errorf("the file outside the project was written: %s", got)
			}
		})
	}
}
