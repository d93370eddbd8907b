//go:build unix

package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/gitx"
)

// The attack: a command in a worktree session makes a FIFO named
// .gitignore in its worktree (mkfifo is no write kin asks about inside
// the session's own folder). Every worktree request runs git status-like
// commands there, git opens the FIFO and waits for a writer for good:
// worktree/status, apply and remove each waited out their 5-minute bound
// (apply and remove hold the session's other requests meanwhile) and
// never said why. Now git is stopped within seconds and the error names
// the FIFO.
func TestWorktreeRequestsSayWhenAFIFOStopsGit(t *testing.T) {
	dir, home, info := created(t)
	ctx := context.Background()
	write(t, filepath.Join(info.Path, "new.txt"), "new\n")
	fifo := filepath.Join(info.Path, "sub", ".gitignore")
	if err := os.MkdirAll(filepath.Dir(fifo), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for name, op := range map[string]func(context.Context) error{
		"status": func(ctx context.Context) error { _, err := StatusOf(ctx, info); return err },
		"apply":  func(ctx context.Context) error { _, err := Apply(ctx, home, info); return err },
		"remove": func(ctx context.Context) error { _, err := Remove(ctx, home, info, false); return err },
	} {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		start := time.Now()
		err := op(ctx)
		cancel()
		if !errors.Is(err, gitx.ErrWaitsOnFIFO) || !strings.Contains(err.Error(), fifo) || time.Since(start) > 15*time.Second {
			t.Errorf("%s after %v: %v", name, time.Since(start).Round(time.Second), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
		t.Error("apply brought changes into the checkout although it failed")
	}
}
