package boundary_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

// tree makes a workspace root and a folder outside it (both real paths).
func tree(t testing.TB) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := boundary.NewWorkspace([]string{root}, filepath.Join(base, "kinhome")); err != nil {
		t.Fatal(err)
	}
	return root, outside
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// A symlink along a path that leads out of the workspace folder carries no
// read, write, stat or remove out of it.
func TestResolverRefusesASymlinkOut(t *testing.T) {
	root, outside := tree(t)
	write(t, filepath.Join(outside, ".bashrc"), "mine")
	if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "d", ".bashrc")
	if _, err := boundary.ReadFile(p); !errors.Is(err, boundary.ErrOutside) {
		t.Errorf("read: %v", err)
	}
	if _, err := boundary.Open(p); !errors.Is(err, boundary.ErrOutside) {
		t.Errorf("open: %v", err)
	}
	if _, err := boundary.Stat(p); !errors.Is(err, boundary.ErrOutside) {
		t.Errorf("stat: %v", err)
	}
	if err := boundary.WriteFile(p, []byte("planted"), 0o644); !errors.Is(err, boundary.ErrOutside) {
		t.Errorf("write: %v", err)
	}
	if err := boundary.Remove(p); !errors.Is(err, boundary.ErrOutside) {
		t.Errorf("remove: %v", err)
	}
	if got := read(t, filepath.Join(outside, ".bashrc")); got != "mine" {
		t.Fatalf("the file outside is now %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("something was made outside: %v", entries)
	}
	// the final element a symlink out: a write replaces the link, never
	// writes through it; a read is refused
	if err := os.Symlink(filepath.Join(outside, ".bashrc"), filepath.Join(root, "rc")); err != nil {
		t.Fatal(err)
	}
	if _, err := boundary.ReadFile(filepath.Join(root, "rc")); !errors.Is(err, boundary.ErrOutside) {
		t.Errorf("read through a final symlink: %v", err)
	}
	if err := boundary.WriteFile(filepath.Join(root, "rc"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(outside, ".bashrc")); got != "mine" {
		t.Fatalf("a write through a final symlink changed the file outside: %q", got)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "rc")); fi.Mode()&os.ModeSymlink != 0 || read(t, filepath.Join(root, "rc")) != "new" {
		t.Fatal("the link was not replaced by the file")
	}
}

// A symlink that stays inside the folder is followed; ".." inside the
// folder too.
func TestResolverFollowsSymlinksThatStayInside(t *testing.T) {
	root, _ := tree(t)
	write(t, filepath.Join(root, "real", "f"), "x")
	if err := os.Symlink("real", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if b, err := boundary.ReadFile(filepath.Join(root, "link", "f")); err != nil || string(b) != "x" {
		t.Fatalf("%q %v", b, err)
	}
	if err := boundary.WriteFile(filepath.Join(root, "link", "g"), []byte("y"), 0o644); err != nil || read(t, filepath.Join(root, "real", "g")) != "y" {
		t.Fatal(err)
	}
	if err := os.Symlink("../real/f", filepath.Join(root, "real", "up")); err != nil {
		t.Fatal(err)
	}
	if b, err := boundary.ReadFile(filepath.Join(root, "real", "up")); err != nil || string(b) != "x" {
		t.Fatalf("up: %q %v", b, err)
	}
}

// Resolve decides what is inside the roots: "..", absolute paths elsewhere
// and symlinks out are outside; "~" is not expanded.
func TestResolveConfinesLexicallyAndThroughSymlinks(t *testing.T) {
	root, outside := tree(t)
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	ws, err := boundary.NewWorkspace([]string{root}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"a/b.go":                    "",
		"a/../b.go":                 "",
		"../x":                      "is outside the workspace",
		"a/../../x":                 "is outside the workspace",
		filepath.Join(outside, "x"): "is outside the workspace",
		"/etc/passwd":               "is outside the workspace",
		"out/x":                     "resolves through a symlink",
	} {
		tg, err := ws.Resolve(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if (want == "") != (tg.Outside == "") || !strings.Contains(tg.Outside, want) {
			t.Errorf("%s: outside %q, want %q", p, tg.Outside, want)
		}
	}
	if _, err := ws.Resolve("~/.ssh/id_rsa"); err == nil {
		t.Error("~ was taken for a path")
	}
	if _, err := ws.Resolve(" "); err == nil {
		t.Error("an empty path was taken")
	}
}

// A root that is itself a symlink works: paths below it, as given or
// real, are inside, and reads go through.
func TestRootThatIsASymlink(t *testing.T) {
	real, _ := tree(t)
	write(t, filepath.Join(real, "main.go"), "package main")
	link := filepath.Join(t.TempDir(), "project")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	ws, err := boundary.NewWorkspace([]string{link}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tg, err := ws.Resolve("main.go")
	if err != nil || tg.Outside != "" || tg.Real != filepath.Join(real, "main.go") || tg.Root != 0 || ws.Rel(tg) != "main.go" {
		t.Fatalf("%+v %v", tg, err)
	}
	if b, err := boundary.ReadFile(tg.Real); err != nil || string(b) != "package main" {
		t.Fatalf("%q %v", b, err)
	}
}

// A folder swapped for a symlink out, again and again, while writes go on:
// not one write lands outside, whichever way each race goes.
func TestResolverHoldsWhileASymlinkIsSwapped(t *testing.T) {
	root, outside := tree(t)
	write(t, filepath.Join(outside, "f"), "mine")
	d := filepath.Join(root, "d")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(d)
			if i%2 == 0 {
				os.Mkdir(d, 0o755)
			} else {
				os.Symlink(outside, d)
			}
		}
	}()
	p := filepath.Join(d, "f")
	for range 2000 {
		_ = boundary.WriteFile(p, []byte("planted"), 0o644)
		_ = boundary.Remove(p)
		if b, err := boundary.ReadFile(p); err == nil && string(b) == "mine" {
			t.Fatal("a read went through the symlink out")
		}
	}
	close(stop)
	wg.Wait()
	if got := read(t, filepath.Join(outside, "f")); got != "mine" {
		t.Fatalf("the file outside is %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("something was made outside: %v", entries)
	}
}

// Unchanged tells a path that still names what kin changed from one whose
// folder was replaced by a symlink since (what undo asks).
func TestUnchanged(t *testing.T) {
	root, outside := tree(t)
	p := filepath.Join(root, "d", ".bashrc")
	write(t, p, "kin")
	if err := boundary.Unchanged(p); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(root, "d"))
	if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	if err := boundary.Unchanged(p); !errors.Is(err, boundary.ErrChanged) {
		t.Fatalf("%v", err)
	}
	os.Remove(filepath.Join(root, "d"))
	if err := boundary.Unchanged(p); !errors.Is(err, boundary.ErrChanged) {
		t.Fatalf("gone: %v", err)
	}
}

// StillReal tells a path about to be written by someone who follows
// symlinks (an ACP client) from one made a symlink since, at the path or
// at a folder along it, dangling or not; folders still missing are fine.
func TestStillReal(t *testing.T) {
	root, outside := tree(t)
	for _, p := range []string{filepath.Join(root, "a.txt"), filepath.Join(root, "new", "dir", "f")} {
		if err := boundary.StillReal(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for name, target := range map[string]string{"link": "AGENTS.md", "out": outside, "dir": "."} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(root, "link"), filepath.Join(root, "out", "f"), filepath.Join(root, "dir", "new", "f")} {
		if err := boundary.StillReal(p); !errors.Is(err, boundary.ErrChanged) {
			t.Errorf("%s: %v, want ErrChanged", p, err)
		}
	}
}

// A write outside every workspace folder (approved as such) is done
// beneath its own folder.
func TestWriteOutsideTheRootsStaysInItsFolder(t *testing.T) {
	_, outside := tree(t)
	p := filepath.Join(outside, "new", "dir", "f")
	if err := boundary.WriteFile(p, []byte("x"), 0o600); err != nil || read(t, p) != "x" {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	// the mode of a replaced file is kept
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := boundary.WriteFile(p, []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 || read(t, p) != "y" {
		t.Fatalf("mode %v", fi.Mode())
	}
}
