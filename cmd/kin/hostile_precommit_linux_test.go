package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pre-commit installs a hook in .git/hooks that runs, at every git
// commit, whatever .pre-commit-config.yaml lists: a "language: system"
// hook is any command, run outside the sandbox. A confined command, run
// unasked (auto-edit, autoApproveSandboxedCommands), must not change that
// file nor create it, as for .husky; write_file of it always asks (here
// the person says no).
func TestHostilePreCommitConfigIsAFileThatRunsLater(t *testing.T) {
	h := newHostile(t)
	h.settings(`{"autoApproveSandboxedCommands": true}`)
	h.repo(h.ws)
	cfg := "repos: []\n"
	h.write(h.ws, ".pre-commit-config.yaml", cfg)
	other := filepath.Join(h.ws, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := `repos: [{repo: local, hooks: [{id: x, name: x, entry: "touch /tmp/ran", language: system}]}]`
	h.start("auto-edit", h.ws, other)
	asked, calls := h.turn(deny, replies(
		bash("c1", `echo '`+hook+`' >> .pre-commit-config.yaml 2>&1; echo '`+hook+`' > other/.pre-commit-config.yaml 2>&1; echo done`),
		call("c2", "write_file", map[string]any{"path": ".pre-commit-config.yaml", "content": hook + "\n"}),
	)...)
	if b, _ := os.ReadFile(filepath.Join(h.ws, ".pre-commit-config.yaml")); string(b) != cfg {
		t.Errorf("the command changed .pre-commit-config.yaml:\n%s\n%v", b, calls["c1"])
	}
	if exists(filepath.Join(other, ".pre-commit-config.yaml")) {
		t.Errorf("the command made other/.pre-commit-config.yaml: %v", calls["c1"])
	}
	if len(asked) != 1 || !strings.Contains(fmt.Sprint(asked[0]), "pre-commit") {
		t.Errorf("write_file of .pre-commit-config.yaml in auto-edit was not asked about as a file that runs later: %v", asked)
	}
}
