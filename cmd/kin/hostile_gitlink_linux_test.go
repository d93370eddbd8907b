package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository records a submodule in its index (a gitlink at vendored/)
// and says nothing of it in .gitmodules: after a clone vendored/ is an
// empty folder. A confined command, run unasked in auto-edit with
// autoApproveSandboxedCommands, copies .git to a folder of its own, sets
// core.fsmonitor there and writes vendored/.git naming it. git status,
// which the person (or the editor) runs outside any sandbox, enters every
// populated gitlink whatever .gitmodules says and would run the planted
// command. The sandbox must keep vendored/.git from being planted, as it
// does for a submodule .gitmodules names.
func TestHostileGitlinkWithoutGitmodulesCannotBePlanted(t *testing.T) {
	h := newHostile(t)
	h.settings(`{"autoApproveSandboxedCommands": true}`)
	h.repo(h.ws)
	head := strings.TrimSpace(h.git(h.ws, "rev-parse", "HEAD"))
	if out := h.git(h.ws, "update-index", "--add", "--cacheinfo", "160000,"+head+",vendored"); out != "" {
		t.Fatalf("git update-index: %s", out)
	}
	h.git(h.ws, "commit", "-q", "-m", "a submodule .gitmodules does not name")
	if err := os.MkdirAll(filepath.Join(h.ws, "vendored"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(h.home, "ran-gitlink")
	h.start("auto-edit")
	// (the copy drops what the sandbox seeded and placed in .git while the
	// command runs: a commondir naming .git would send git to its config)
	plant := `cp -r .git planted && rm -rf planted/commondir planted/config.worktree planted/gitdir planted/modules && git config -f planted/config core.fsmonitor "touch ` + marker + `" && echo "gitdir: $PWD/planted" > vendored/.git; echo rc=$?`
	asked, calls := h.turn(nil, replies(bash("c1", plant))...)
	if len(asked) != 0 {
		t.Fatalf("asked %v", asked)
	}
	out := fmt.Sprint(calls["c1"]["output"])
	if !strings.Contains(out, "rc=") {
		t.Fatalf("the command did not run as expected: %v", calls["c1"])
	}
	h.git(h.ws, "status") // the person, outside any sandbox
	if exists(marker) {
		t.Fatalf("the command planted vendored/.git and git status ran its fsmonitor outside the sandbox:\n%s", out)
	}
	if exists(filepath.Join(h.ws, "vendored", ".git")) {
		t.Errorf("vendored/.git exists after the command:\n%s", out)
	}
}
