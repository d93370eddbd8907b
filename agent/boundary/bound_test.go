package boundary_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

// The attack: a repository ships 3,100 .env files (or a command makes
// them). Each was a read-only mount of every command's sandbox, and
// bubblewrap refused the command line ("Exceeded maximum number of
// arguments 9000"): no command ran in that workspace again. Past
// MaxProtectedMounts the secret-named files go first, what makes things
// run later stays, and it is a gap (the command is asked, saying why).
func TestProtectStaysWithinTheMountsACommandCanHave(t *testing.T) {
	root, _ := tree(t)
	gitIn(t, root, "init", "-q")
	write(t, filepath.Join(root, ".vscode", "tasks.json"), "{}")
	for i := range boundary.MaxProtectedMounts + 100 {
		write(t, filepath.Join(root, "svc", fmt.Sprint(i), ".env"), "K=v")
	}
	write(t, filepath.Join(root, "zz", "deep", "AGENTS.md"), "x")
	p := protect(t, root)
	above := map[string]bool{} // the folders the sandbox pins
	for _, r := range append(append([]string{}, p.ReadOnly...), p.Missing...) {
		if !strings.HasSuffix(r, ".env") {
			for d := filepath.Dir(r); d != root; d = filepath.Dir(d) {
				above[d] = true
			}
		}
	}
	if n := len(p.ReadOnly) + len(p.Missing) + len(p.Seeded) + len(p.Pins) + len(above); n > boundary.MaxProtectedMounts {
		t.Errorf("%d mounts, over %d", n, boundary.MaxProtectedMounts)
	}
	ro := " " + rel(root, p.ReadOnly) + " "
	for _, want := range []string{" .vscode ", " zz/deep/AGENTS.md ", " .git/config "} {
		if !strings.Contains(ro, want) {
			t.Errorf("%s is not read-only any more", want)
		}
	}
	if !strings.Contains(strings.Join(p.Gaps, "\n"), "more protected paths than kin can mount") {
		t.Errorf("no gap says so: %v", p.Gaps)
	}
}
