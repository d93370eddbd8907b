package chat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// kin chat --worktree with the built binary: the model's write lands in
// the session's worktree, /worktree status lists it, apply brings it to
// the checkout, remove takes the worktree and its branch away; a folder
// that is not a repository is refused with the reason.
func TestBinaryWorktree(t *testing.T) {
	e := newEnv(t)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)...)
		cmd.Dir = e.WS
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r := e.chatPiped(t, "hello\n", "--worktree")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "not in a git repository") {
		t.Errorf("not a repository: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(e.WS, "README"), []byte("app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-qm", "first")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "write_file", Arguments: args(map[string]any{"path": "NOTES.md", "content": "from the worktree\n"})}}},
		modeltest.Reply{Text: []string{"wrote it"}},
	)
	r = e.chatPiped(t, "write notes\n/worktree status\n/worktree remove\n/worktree apply\n/worktree remove\n", "--worktree", "--branch", "try/notes", "--approve-all")
	out := r.stdout + r.stderr
	for _, want := range []string{
		"on branch try/notes (from main",
		"added       NOTES.md",
		"not applied",
		"holds changes not applied",
		"Applied 1 file(s) to the checkout as uncommitted changes:",
		"Removed the worktree and its branch try/notes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.WS, "NOTES.md")); string(b) != "from the worktree\n" {
		t.Errorf("NOTES.md in the checkout = %q", b)
	}
	if branches := git("branch", "--list", "try/*"); branches != "" {
		t.Errorf("branch left: %q", branches)
	}
}
