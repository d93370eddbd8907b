//go:build unix

package gitx_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: the git folder's info/attributes is a FIFO. git worktree
// add reads it not itself but in a git it starts (to check the files
// out), which waits on it for good. When the context ends, only the
// first git is killed; the second kept git's output pipes open and
// Output waited for it, past its context, for good.
func TestAGitThatGitStartedDoesNotOutliveTheContext(t *testing.T) {
	defer gitx.SetStallAfter(time.Hour)() // the context, not the watch, ends it
	base := t.TempDir()
	repo := gitxtest.Repo(t, filepath.Join(base, "repo"), map[string]string{"a.txt": "a\n"})
	fifo := filepath.Join(repo, ".git", "info", "attributes")
	_ = os.MkdirAll(filepath.Dir(fifo), 0o755)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	defer unblock(fifo)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := gitx.Output(ctx, repo, "worktree", "add", "-q", "-b", "side", filepath.Join(base, "wt"), "HEAD")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("git worktree add with a FIFO for info/attributes succeeded")
		}
	case <-time.After(20 * time.Second):
		for i := 0; i < 3; i++ {
			unblock(fifo)
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("git worktree add outlived its context by 20 s")
	}
}
