package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// hostile is a repository with one commit whose own configuration names
// programs for git to run (gitxtest.Hostile: an fsmonitor, filter, textconv
// and external diff drivers for every file, a pager, a checkout hook), and
// a change to a.txt not committed yet.
func hostile(t *testing.T) (repo, ran string) {
	t.Helper()
	repo = gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "one\n"})
	ran = gitxtest.Hostile(t, repo)
	gitxtest.Write(t, repo, "a.txt", "two\n")
	return repo, ran
}

func TestHostileRepositoryRunsNothing(t *testing.T) {
	repo, ran := hostile(t)
	ctx := context.Background()
	for _, args := range [][]string{
		{"status", "--porcelain"},
		{"diff"},
		{"diff", "HEAD"},
		{"add", "-A"},
		{"diff", "--cached"},
		{"worktree", "add", "-q", "-b", "side", filepath.Join(filepath.Dir(repo), "wt"), "HEAD"},
	} {
		out, err := gitx.Output(ctx, repo, args...)
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		if len(args) == 1 && args[0] == "diff" && !strings.Contains(out, "two") {
			t.Errorf("git diff lost the change: %q", out)
		}
	}
	for _, name := range gitxtest.Ran(t, ran) {
		t.Errorf("the repository's %s ran", name)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(repo), "wt", "a.txt")); err != nil {
		t.Errorf("worktree not checked out: %v", err)
	}
	// The control: plain git in the same repository runs the planted
	// programs, so the repository above really was hostile.
	gitxtest.Control(t, repo, ran)
}

func TestToplevelAndInTree(t *testing.T) {
	repo, _ := hostile(t)
	ctx := context.Background()
	sub := filepath.Join(repo, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	top, err := gitx.Toplevel(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(repo)
	if got, _ := filepath.EvalSymlinks(top); got != want {
		t.Errorf("Toplevel = %q, want %q", top, repo)
	}
	if !gitx.InTree(ctx, sub) {
		t.Error("InTree(sub) = false")
	}
	if gitx.InTree(ctx, t.TempDir()) {
		t.Error("InTree(empty folder) = true")
	}
	_, err = gitx.Output(ctx, t.TempDir(), "rev-parse", "HEAD")
	var ge *gitx.Error
	if err == nil || !strings.Contains(err.Error(), "not a git repository") || !errors.As(err, &ge) {
		t.Errorf("outside a repository: %v", err)
	}
}

// A snapshot through a temporary index and a patch applied from stdin, in
// the hostile repository: the work tree's own index is left as it was, the
// patch lands, the repository's clean filter never runs, and only
// GIT_INDEX_FILE is let through.
func TestRunWithIndexAndStdin(t *testing.T) {
	repo, ran := hostile(t)
	ctx := context.Background()
	before, err := os.ReadFile(filepath.Join(repo, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(t.TempDir(), "index")
	if _, err := gitx.RunWith(ctx, repo, gitx.Input{Index: idx}, "read-tree", "HEAD"); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.RunWith(ctx, repo, gitx.Input{Index: idx}, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	tree, err := gitx.RunWith(ctx, repo, gitx.Input{Index: idx}, "write-tree")
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(repo, ".git", "index"))
	if string(before) != string(after) {
		t.Error("the work tree's own index changed")
	}
	patch, err := gitx.Output(ctx, repo, "diff", "--binary", "HEAD", strings.TrimSpace(tree))
	if err != nil || !strings.Contains(patch, "+two") {
		t.Fatalf("diff of the snapshot: %v %q", err, patch)
	}
	if _, err := gitx.Output(ctx, repo, "checkout", "--", "a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := gitx.RunWith(ctx, repo, gitx.Input{Stdin: strings.NewReader(patch)}, "apply", "--check", "-"); err != nil {
		t.Fatalf("apply --check: %v", err)
	}
	if _, err := gitx.RunWith(ctx, repo, gitx.Input{Stdin: strings.NewReader(patch)}, "apply", "-"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "two\n" {
		t.Errorf("a.txt after apply = %q", b)
	}
	_, err = gitx.RunWith(ctx, repo, gitx.Input{Stdin: strings.NewReader(patch)}, "apply", "--check", "-")
	if err == nil || gitx.ExitCode(err) != 1 || !strings.Contains(err.Error(), "a.txt") {
		t.Errorf("a second apply --check = %v (exit %d), want a failure naming a.txt", err, gitx.ExitCode(err))
	}
	if _, err := gitx.RunWith(ctx, repo, gitx.Input{Index: "relative/index"}, "status"); err == nil {
		t.Error("a relative index was accepted")
	}
	entries, _ := os.ReadDir(ran)
	for _, e := range entries {
		t.Errorf("the repository's %s ran", e.Name())
	}
}
