//go:build unix

package gitx_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/gitx"
)

// The attack: the "gitdir" file Owned reads (in a git folder a .git file
// names, so the repository's to make) is a regular file when looked at
// and a FIFO when read. Reading a FIFO waits for a writer in open(2),
// which no context cancels: review/start or a worktree session/new would
// hang for good. smallFile opens without waiting and reads only what is
// a regular file once open.
func TestSmallFileNeverWaitsOnAFIFOSwappedIn(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "gitdir")
	if err := os.WriteFile(p, []byte("/some/where/.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := gitx.SmallFile(p); !ok || got != "/some/where/.git" {
		t.Fatalf("a plain gitdir file: %q %v", got, ok)
	}
	defer gitx.SetBeforeOpen(func(name string) {
		if name != p {
			return
		}
		if err := os.Remove(p); err != nil {
			t.Error(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Error(err)
		}
	})()
	done := make(chan bool, 1)
	go func() {
		_, ok := gitx.SmallFile(p)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a FIFO was read as a gitdir file")
		}
	case <-time.After(10 * time.Second):
		// unblock the reader so the test process can end
		if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("smallFile waits on a FIFO swapped in after its check")
	}
}
