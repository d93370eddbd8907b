package acp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent"
)

// Attack: the model asks to read ~/.aws/credentials, a .env, or a file
// through a symlink out of the workspace. The tool_call kin announces it
// with named the file as a location, and a client following the agent
// (Zed) opens a location on screen at once, before the person is asked
// whether the model may read it. Locations are only files below the
// working directory, symlinks resolved, whose names do not say they hold
// secrets.
func TestLocationsNameNoSecretAndNothingOutside(t *testing.T) {
	ws, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "credentials"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(out, "credentials"), filepath.Join(ws, "creds")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(out, "credentials"), "../x/credentials", ".env", "pkg/.env", "id_rsa", "creds"} {
		if got := locationsOf(agent.ToolCall{}, map[string]any{"path": p}, ws); len(got) != 0 {
			t.Errorf("path %q: locations %+v, want none", p, got)
		}
	}
	got := locationsOf(agent.ToolCall{}, map[string]any{"path": "src/main.go"}, ws)
	if len(got) != 1 || got[0].Path != filepath.Join(ws, "src", "main.go") {
		t.Errorf("a workspace file: locations %+v", got)
	}
}
