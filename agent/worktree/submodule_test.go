package worktree

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a command in a worktree session (confined: it may make a
// repository in a subfolder of its workspace and commit) makes a nested
// repository whose own configuration names a clean filter its attributes
// select, commits it into the worktree's branch as a submodule, and
// changes a file in it keeping its size. Status, apply and remove take a
// snapshot with git add -A, outside the sandbox, and git add asks a
// checked-out submodule whether it is dirty by running git status in it,
// which reads the submodule's configuration: the filter ran unconfined.
func TestSnapshotRunsNoSubmoduleProgram(t *testing.T) {
	_, home, info := created(t)
	ctx := context.Background()
	sub := gitxtest.Repo(t, filepath.Join(info.Path, "sub"), map[string]string{"s.txt": "s\n"})
	gitxtest.Git(t, info.Path, "add", "sub")
	gitxtest.Git(t, info.Path, "commit", "-q", "-m", "a submodule")
	ran := filepath.Join(t.TempDir(), "ran")
	clean := filepath.Join(filepath.Dir(ran), "clean.sh")
	write(t, clean, "#!/bin/sh\ntouch "+ran+"\ncat\n")
	if err := os.Chmod(clean, 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Git(t, sub, "config", "filter.evil.clean", clean)
	write(t, filepath.Join(sub, ".git", "info", "attributes"), "* filter=evil\n")
	write(t, filepath.Join(sub, "s.txt"), "t\n") // same size: git must read it
	write(t, filepath.Join(info.Path, "a.txt"), "changed\n")

	st, err := StatusOf(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("worktree status ran the submodule's clean filter")
	}
	var paths []string
	for _, f := range st.Files {
		paths = append(paths, f.Path+":"+f.Status)
	}
	if strings.Join(paths, ",") != "a.txt:modified,sub:added" {
		t.Errorf("status files %v", paths)
	}
	// The control: plain git add -A in a temporary index runs it.
	idx := filepath.Join(t.TempDir(), "index")
	for _, args := range [][]string{{"read-tree", "HEAD"}, {"add", "-A"}} {
		c := exec.Command("git", args...)
		c.Dir = info.Path
		c.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		_ = c.Run()
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatal("control: plain git add -A did not run the submodule's filter; the fixture proves nothing")
	}
	_ = os.Remove(ran)

	// A submodule moved to another commit is still part of the snapshot.
	gitxtest.Git(t, sub, "commit", "-q", "--allow-empty", "-m", "moved")
	_ = os.Remove(ran) // that commit ran git in sub itself, as a command there would
	write(t, filepath.Join(sub, "s.txt"), "u\n")
	tree, err := snapshot(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(gitxtest.Git(t, sub, "rev-parse", "HEAD"))
	if got := gitxtest.Git(t, info.Path, "ls-tree", tree, "sub"); !strings.Contains(got, head) {
		t.Errorf("the snapshot lost the submodule's commit %s: %q", head, got)
	}
	if _, err := Remove(ctx, home, info, false); kind(err) != KindUnapplied {
		t.Errorf("remove of unapplied changes: %v", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the submodule's clean filter ran")
	}

}
