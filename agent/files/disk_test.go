package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
