//go:build unix

package boundary_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// mkfifo makes a FIFO at p: what a confined command may leave anywhere in
// the workspace (mkfifo needs no privilege).
func mkfifo(t testing.TB, p string) {
	t.Helper()
	mkdirs(t, filepath.Dir(p))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sparse makes a file of size bytes at p that costs no disk: what
// `truncate -s 1T` in a confined command leaves.
func sparse(t testing.TB, p string, size int64) {
	t.Helper()
	mkdirs(t, filepath.Dir(p))
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
}

// within runs f and fails the test when it has not returned in 5 seconds
// (a FIFO's open blocks until something writes to it: forever).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s still blocked after 5s", what)
	}
}

// The attack: a command leaves a FIFO (or a sparse terabyte) where kin's
// tools read. Open and ReadFile refuse a FIFO at once instead of blocking
// in open(2) for good (past any cancel), also behind a symlink that stays
// inside; ReadFileUpTo refuses a file over its limit without reading it.
func TestOpenRefusesAFIFOAndReadFileUpToAHugeFile(t *testing.T) {
	root, _ := tree(t)
	fifo := filepath.Join(root, "pipe")
	mkfifo(t, fifo)
	if err := os.Symlink("pipe", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, filepath.Join(root, "link")} {
		within(t, "Open of a FIFO", func() {
			f, err := boundary.Open(p)
			if err == nil {
				f.Close()
			}
			if !errors.Is(err, boundary.ErrNotRegular) {
				t.Errorf("Open(%s) = %v, want ErrNotRegular", p, err)
			}
		})
		within(t, "ReadFile of a FIFO", func() {
			if _, err := boundary.ReadFile(p); !errors.Is(err, boundary.ErrNotRegular) {
				t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", p, err)
			}
		})
	}
	huge := filepath.Join(root, "huge")
	sparse(t, huge, 1<<40)
	if _, err := boundary.ReadFileUpTo(huge, 1<<20); !errors.Is(err, boundary.ErrTooLarge) {
		t.Fatalf("ReadFileUpTo of a sparse terabyte = %v, want ErrTooLarge", err)
	}
	// what stays as it was: regular files and folders
	write(t, filepath.Join(root, "a.txt"), "hello")
	if b, err := boundary.ReadFileUpTo(filepath.Join(root, "a.txt"), 5); err != nil || string(b) != "hello" {
		t.Fatalf("ReadFileUpTo(a.txt, 5) = %q, %v", b, err)
	}
	if _, err := boundary.ReadFileUpTo(filepath.Join(root, "a.txt"), 4); !errors.Is(err, boundary.ErrTooLarge) {
		t.Fatalf("ReadFileUpTo(a.txt, 4) = %v, want ErrTooLarge", err)
	}
	if entries, err := boundary.ReadDir(root); err != nil || len(entries) != 4 {
		t.Fatalf("ReadDir(root) = %d entries, %v", len(entries), err)
	}
}

// The attack: a confined command makes a nested repository whose
// commondir is a FIFO, whose .git file is a sparse terabyte, or whose
// .gitmodules is a FIFO. The walk before every later command read each
// with os.ReadFile: it blocked for good on the FIFO (no command ran again
// in that kin) and tried to hold the terabyte in memory (kin died). Now
// each is refused at once and is a gap: which git folder it names is
// unknown, so the command is asked about, saying why.
func TestProtectUnreadableGitFilesFailClosed(t *testing.T) {
	root, _ := tree(t)
	mkdirs(t, filepath.Join(root, "a", ".git", "objects"))
	mkfifo(t, filepath.Join(root, "a", ".git", "commondir"))
	sparse(t, filepath.Join(root, "b", ".git"), 1<<40)
	mkfifo(t, filepath.Join(root, "c", ".gitmodules"))
	var p boundary.Protection
	within(t, "Protect", func() { p = protect(t, root) })
	gaps := strings.Join(p.Gaps, "\n")
	for _, want := range []string{"a/.git/commondir", "b/.git", "c/.gitmodules"} {
		if !strings.Contains(gaps, filepath.Join(root, want)+" (") {
			t.Errorf("no gap names %s:\n%s", want, gaps)
		}
	}

	// a folder there is none to git (an empty one may be another
	// command's placeholder, as .gitmodules at the top is while it runs):
	// no gap
	other, _ := tree(t)
	mkdirs(t, filepath.Join(other, ".gitmodules"), filepath.Join(other, "d", ".gitmodules"))
	if q := protect(t, other); len(q.Gaps) != 0 {
		t.Errorf("a folder named .gitmodules is a gap: %v", q.Gaps)
	}
}
