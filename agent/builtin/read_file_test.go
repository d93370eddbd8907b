package builtin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

func TestReadFile(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a/b.go": "package b\n\nfunc B() {}\n"})

	r := call(t, "read_file", env, map[string]any{"path": "a/b.go"})
	wantStatus(t, r, tool.StatusCompleted)
	want := "     1\tpackage b\n     2\t\n     3\tfunc B() {}\n"
	if r.Output != want {
		t.Fatalf("output %q, want %q", r.Output, want)
	}
	// absolute inside the root works too
	r = call(t, "read_file", env, map[string]any{"path": filepath.Join(root, "a/b.go"), "offset": 3})
	wantContains(t, r.Output, "     3\tfunc B() {}\n", "[showing lines 3-3 of 3]")
	wantNotContains(t, r.Output, "package b")
}

func TestReadFilePaging(t *testing.T) {
	root, env := workspace(t)
	var sb strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	sb.WriteString("last line without newline")
	files(t, root, map[string]string{"big.txt": sb.String()})

	r := call(t, "read_file", env, map[string]any{"path": "big.txt"})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "     1\tline 1\n", "  2000\tline 2000\n", "[showing lines 1-2000 of 5001; call again with offset=2001]")
	wantNotContains(t, r.Output, "line 2001\n")

	r = call(t, "read_file", env, map[string]any{"path": "big.txt", "offset": 4999})
	wantContains(t, r.Output, "  4999\tline 4999\n", "  5001\tlast line without newline\n", "[showing lines 4999-5001 of 5001]")

	r = call(t, "read_file", env, map[string]any{"path": "big.txt", "offset": 10, "limit": 2})
	if want := "    10\tline 10\n    11\tline 11\n[showing lines 10-11 of 5001; call again with offset=12]\n"; r.Output != want {
		t.Fatalf("got %q, want %q", r.Output, want)
	}

	r = call(t, "read_file", env, map[string]any{"path": "big.txt", "offset": 6000})
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "offset 6000 is past the end", "5001 lines")
}

func TestReadFileByteCap(t *testing.T) {
	root, env := workspace(t)
	line := strings.Repeat("x", 999) + "\n"
	files(t, root, map[string]string{"wide.txt": strings.Repeat(line, 1000)})
	r := call(t, "read_file", env, map[string]any{"path": "wide.txt"})
	wantStatus(t, r, tool.StatusCompleted)
	if len(r.Output) > tool.MaxOutput {
		t.Fatalf("output %d bytes, over %d", len(r.Output), tool.MaxOutput)
	}
	wantContains(t, r.Output, "of 1000; call again with offset=")
	// a single huge line is cut, not returned whole
	files(t, root, map[string]string{"min.js": strings.Repeat("y", 1<<20)})
	r = call(t, "read_file", env, map[string]any{"path": "min.js"})
	wantContains(t, r.Output, "[... line cut: 1048576 bytes in all]")
	if len(r.Output) > 4000 {
		t.Fatalf("huge line not cut: %d bytes", len(r.Output))
	}
}

func TestReadFileBinaryAndEmpty(t *testing.T) {
	root, env := workspace(t)
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\x01", 100)
	files(t, root, map[string]string{
		"img.png":   png,
		"blob.dat":  "abc\x00def",
		"empty.txt": "",
		"latin.txt": "caf\xe9 au lait\n", // mostly text: shown, bad byte replaced
	})
	r := call(t, "read_file", env, map[string]any{"path": "img.png"})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "binary file", fmt.Sprintf("%d bytes", len(png)), "image/png")
	r = call(t, "read_file", env, map[string]any{"path": "blob.dat"})
	wantContains(t, r.Output, "binary file, 7 bytes")
	r = call(t, "read_file", env, map[string]any{"path": "empty.txt"})
	wantContains(t, r.Output, "empty")
	r = call(t, "read_file", env, map[string]any{"path": "latin.txt"})
	wantContains(t, r.Output, "caf\uFFFD au lait")
}

func TestReadFileErrors(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"d/x.txt": "x"})
	_, err := prepare(t, "read_file", env, map[string]any{"path": "nope.txt"})
	wantErr(t, err, "nope.txt does not exist")
	_, err = prepare(t, "read_file", env, map[string]any{"path": "d"})
	wantErr(t, err, "is a directory", "list_dir")
	_, err = prepare(t, "read_file", env, map[string]any{"path": "d/x.txt", "offset": 0})
	wantErr(t, err, "offset")
}

// TestReadToolsConfinement checks every read tool refuses paths that leave
// the workspace: absolute elsewhere, "..", a symlinked file and a
// symlinked directory pointing outside.
func TestReadToolsConfinement(t *testing.T) {
	root, env := workspace(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files(t, outside, map[string]string{"secret.txt": "top secret\n", "dir/inner.txt": "inner secret\n"})
	files(t, root, map[string]string{"ok.txt": "fine\n", "sub/ok.txt": "fine\n"})
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")))
	must(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "linkdir")))
	// an inside symlink is fine
	must(t, os.Symlink(filepath.Join(root, "ok.txt"), filepath.Join(root, "good.txt")))

	rel, _ := filepath.Rel(root, filepath.Join(outside, "secret.txt"))
	escapes := []string{
		filepath.Join(outside, "secret.txt"), // absolute outside
		rel,                                  // ../../…/secret.txt
		"sub/../../" + filepath.Base(root) + "x/secret.txt",
		"link.txt",          // symlink to a file outside
		"linkdir/inner.txt", // through a symlinked directory
		"/etc/passwd",
	}
	for _, p := range escapes {
		_, err := prepare(t, "read_file", env, map[string]any{"path": p})
		wantErr(t, err, "refused", "outside the workspace")
	}
	for _, p := range []string{outside, "..", "linkdir", rel} {
		_, err := prepare(t, "list_dir", env, map[string]any{"path": p})
		wantErr(t, err, "refused")
		_, err = prepare(t, "search", env, map[string]any{"pattern": "secret", "path": p})
		wantErr(t, err, "refused")
	}
	r := call(t, "read_file", env, map[string]any{"path": "good.txt"})
	wantContains(t, r.Output, "fine")

	// a workspace-wide search does not follow the symlinks out
	r = call(t, "search", env, map[string]any{"pattern": "secret"})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "no matches")
	// and list_dir shows them as symlinks without entering them
	r = call(t, "list_dir", env, map[string]any{"glob": "**"})
	wantContains(t, r.Output, "symlink", "linkdir -> ")
	wantNotContains(t, r.Output, "inner.txt")
}

func TestReadFile5MBMemory(t *testing.T) {
	root, env := workspace(t)
	p := filepath.Join(root, "big.log")
	writeBigFile(t, p, 5<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// Prepare reads the page (once), Run hands it over.
	a := mustPrepare(t, "read_file", env, map[string]any{"path": "big.log"})
	r := a.Run(t.Context(), nil)
	runtime.ReadMemStats(&after)
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "[showing lines 1-")
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("reading a page of a 5 MB file allocated %d bytes; it must stream", alloc)
	}
}

// writeBigFile writes about size bytes of log-like lines.
func writeBigFile(t testing.TB, p string, size int) {
	t.Helper()
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "2026-11-30T23:15:%02d.000Z INFO request %d handled in %dms path=/api/v1/items/%d\n", i%60, i, i%997, i)
	}
	must(t, os.WriteFile(p, []byte(sb.String()), 0o644))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
