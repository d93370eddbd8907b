package gitx_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// A linked worktree's own configuration (config.worktree, read once the
// repository sets extensions.worktreeConfig) names a filter for every
// file: gitx lists the worktree scope too and neutralises it.
func TestWorktreeConfigRunsNothing(t *testing.T) {
	base := t.TempDir()
	repo := gitxtest.Repo(t, filepath.Join(base, "repo"), map[string]string{"a.txt": "one\n"})
	wt := filepath.Join(base, "wt")
	gitxtest.Git(t, repo, "worktree", "add", "-q", "-b", "side", wt, "HEAD")
	ran := t.TempDir()
	clean := filepath.Join(base, "clean.sh")
	if err := os.WriteFile(clean, []byte("#!/bin/sh\ntouch "+filepath.Join(ran, "clean")+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Git(t, repo, "config", "extensions.worktreeConfig", "true")
	gitxtest.Git(t, wt, "config", "--worktree", "filter.evil.clean", clean)
	gitxtest.Write(t, repo, ".git/info/attributes", "* filter=evil\n")
	gitxtest.Write(t, wt, "a.txt", "two\n")
	for _, args := range [][]string{{"status", "--porcelain"}, {"diff"}, {"add", "-A"}} {
		if _, err := gitx.Output(context.Background(), wt, args...); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
	}
	for _, name := range gitxtest.Ran(t, ran) {
		t.Fatalf("the worktree's %s ran", name)
	}
	// git add -A left the index's record of a.txt fresh, so plain git
	// diff would read a.txt (and run the filter) only when its timestamp
	// is racy: a change of size makes it read the file every time
	gitxtest.Write(t, wt, "a.txt", "three\n")
	gitxtest.Control(t, wt, ran)
}
