package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/mcp/config"
)

// TestYourFilesMayBeLinks: the person's own files in KIN_HOME may be
// symlinks into a dotfiles repository; the Store writes through such a
// link (TestWriteFollowsSymlink). Reading the global mcp.json through the
// boundary's "beneath its folder" rule, meant for a repository's files,
// refused the link ("leads outside the folder it belongs to") and, the
// file being the person's, failed the whole load: no MCP server of any
// scope started, and `kin mcp list` failed, right after `kin mcp add`
// had written through the same link. The same holds for
// mcp_secrets.json. A repository's files keep the rule.
func TestYourFilesMayBeLinks(t *testing.T) {
	workdir, home := dirs(t)
	dots := t.TempDir()
	link := func(name, content string) {
		real := filepath.Join(dots, name)
		writeFile(t, real, content)
		if err := os.Symlink(real, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("mcp.json", `{"mcpServers":{"mine":{"command":"mine"}}}`)
	link(config.SecretsFileName, `{}`)
	st := config.NewStore(workdir, home)
	if err := st.Add(config.ScopeProject, "p", json.RawMessage(`{"command":"srv","env":{"TOKEN":"tok-value"}}`)); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, workdir, home, nil)
	if got := names(cfg.Servers); got != "p@project,mine@global" {
		t.Fatalf("servers %s (%s)", got, warningsText(cfg))
	}
	if cfg.Servers[0].Env["TOKEN"] != "tok-value" {
		t.Errorf("the project's stored value did not resolve: %s", warningsText(cfg))
	}
}
