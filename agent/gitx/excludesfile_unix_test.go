//go:build unix

package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a repository's configuration names, as its excludes or
// attributes file, a FIFO it brings along (core.excludesFile,
// core.attributesFile). git status opens it and waits for a writer for
// good; the watch looked only for FIFOs named .gitignore and the like.
func TestGitStopsOnAConfiguredFIFO(t *testing.T) {
	defer gitx.SetStallAfter(100 * time.Millisecond)()
	for _, key := range []string{"core.excludesFile", "core.attributesFile"} {
		t.Run(key, func(t *testing.T) {
			repo := gitxtest.Repo(t, filepath.Join(t.TempDir(), "repo"), map[string]string{"a.txt": "a\n"})
			gitxtest.Write(t, repo, "a.txt", "b\n")
			gitxtest.Write(t, repo, "new.txt", "new\n")
			fifo := filepath.Join(repo, "patterns")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skip(err)
			}
			// absolute, and relative (git takes it from the work tree top)
			val := fifo
			if key == "core.attributesFile" {
				val = "patterns"
			}
			gitxtest.Git(t, repo, "config", key, val)
			done := make(chan error, 1)
			go func() {
				_, err := gitx.Output(context.Background(), repo, "status", "--porcelain")
				if err == nil {
					_, err = gitx.Output(context.Background(), repo, "diff")
				}
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, gitx.ErrWaitsOnFIFO) {
					t.Errorf("git: %v, want ErrWaitsOnFIFO", err)
				}
			case <-time.After(10 * time.Second):
				for i := 0; i < 4; i++ {
					unblock(fifo)
					time.Sleep(50 * time.Millisecond)
				}
				t.Fatal("git waits on the FIFO the configuration names")
			}
			_ = os.Remove(fifo)
		})
	}
}
