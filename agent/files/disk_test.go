package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// A folder along an approved write's path (docs/config, a plain file when
// the tools checked it) swapped since for a symlink to .git, which stays
// inside the workspace: the resolver follows a symlink that stays inside,
// and kin wrote .git/config, a file that makes things run later, which the
// sandbox keeps every command from writing and the auto-edit mode and
// every grant must ask for. The path must still be the real one approved.
func TestDiskWriteDoesNotFollowAFolderSwappedForASymlink(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	if _, err := boundary.NewWorkspace([]string{ws}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", filepath.Join(ws, "docs")); err != nil { // the swap
		t.Fatal(err)
	}
	_, err := Disk{}.Write(context.Background(), Change{Path: filepath.Join(ws, "docs", "config"), New: []byte("[core]\n\thooksPath = x\n")})
	if !errors.Is(err, boundary.ErrChanged) {
		t.Errorf("%v, want ErrChanged", err)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "config")); err == nil {
		t.Fatal("kin wrote .git/config through the swapped folder")
	}
	// a new file in new folders is written
	p := filepath.Join(ws, "src", "new.go")
	if _, err := (Disk{}).Write(context.Background(), Change{Path: p, New: []byte("package src\n")}); err != nil {
		t.Fatal(err)
	}
}

// A write waiting behind another write of its file (an ACP client's,
// which may take its client's 30 seconds) ends when its call is
// cancelled, instead of waiting the other out.
func TestAWriteWaitingForItsFileEndsWithItsCall(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	p := filepath.Join(ws, "a.txt")
	unlock, err := LockPath(context.Background(), p) // the other write, under way
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Disk{}.Write(ctx, Change{Path: p, New: []byte("x\n")})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the write is past its first check, waiting
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%v, want cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled write still waits for the other")
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("the cancelled write wrote")
	}
}
