package gitx_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a repository ships a submodule checked out with its own git
// folder, whose configuration names a clean filter its .gitattributes
// selects, and a change of the same size in it. A diff of the work tree
// (review's "uncommitted" and "base" targets) asks whether the submodule
// is dirty by running git status inside it, a child git that reads the
// submodule's configuration, which gitx's neutralising of the top
// repository's drivers does not reach: the filter ran.
func TestSubmoduleConfigurationRunsNothing(t *testing.T) {
	ctx := context.Background()
	repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "one\n"})
	sub := gitxtest.Repo(t, filepath.Join(repo, "sub"), map[string]string{"s.txt": "s\n"})
	gitxtest.Git(t, repo, "add", "sub")
	gitxtest.Git(t, repo, "commit", "-q", "-m", "sub")
	ran := filepath.Join(t.TempDir(), "ran")
	gitxtest.Write(t, filepath.Dir(ran), "clean.sh", "#!/bin/sh\ntouch "+ran+"\ncat\n")
	if err := os.Chmod(filepath.Join(filepath.Dir(ran), "clean.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Git(t, sub, "config", "filter.evil.clean", filepath.Join(filepath.Dir(ran), "clean.sh"))
	gitxtest.Write(t, sub, ".git/info/attributes", "* filter=evil\n")
	gitxtest.Write(t, sub, "s.txt", "t\n") // same size: git must read it to know

	for _, args := range [][]string{
		{"diff", "--name-only", "HEAD", "--"},
		{"diff"},
		{"status", "--porcelain"},
		// git add has no such flag: its caller passes submodules by
		// (worktree's snapshot, TestSnapshotRunsNoSubmoduleProgram)
	} {
		if _, err := gitx.Output(ctx, repo, args...); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("git %v ran the submodule's clean filter", args)
		}
	}
	// The control: plain git runs it.
	plain := exec.Command("git", "diff", "HEAD")
	plain.Dir = repo
	plain.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	_ = plain.Run()
	if _, err := os.Stat(ran); err != nil {
		t.Error("control: plain git did not run the submodule's filter; the fixture proves nothing")
	}
}
