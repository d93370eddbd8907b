package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A repository ships 3,100 .env files, one a service (or a command makes
// them: touch needs no more). Each was a read-only mount of every
// command's sandbox, and bubblewrap refused the command line: "Exceeded
// maximum number of arguments 9000", for every command in that workspace
// from then on. Now the protection stays within what a command can mount:
// the command is asked (the protection is incomplete, and the approval
// says why), and once allowed it runs; .git/config stays read-only to it.
func TestHostileThousandsOfProtectedPathsStillLetCommandsRun(t *testing.T) {
	h := newHostile(t)
	h.settings(`{"autoApproveSandboxedCommands": true}`)
	h.repo(h.ws)
	for i := range 3100 {
		h.write(h.ws, fmt.Sprintf("svc/%d/.env", i), "K=v\n")
	}
	h.start("auto-edit")
	asked, calls := h.turn(allow, replies(bash("c1", `echo ran-$((6*7)); echo x >> .git/config 2>&1`))...)
	out := fmt.Sprint(calls["c1"]["output"])
	if !strings.Contains(out, "ran-42") {
		t.Fatalf("the command did not run:\n%s", out)
	}
	if len(asked) != 1 || !strings.Contains(fmt.Sprint(asked[0]), "more protected paths") {
		t.Errorf("the command was not asked about, saying why: %v", asked)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, ".git", "config")); strings.HasSuffix(string(b), "\nx\n") {
		t.Errorf(".git/config was changed:\n%s", b)
	}
}
