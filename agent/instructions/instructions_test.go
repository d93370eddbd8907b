package instructions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/instructions"
)

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func dir(t testing.TB) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func paths(fs []instructions.File) string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Scope)+":"+filepath.Base(filepath.Dir(f.Path))+"/"+filepath.Base(f.Path))
	}
	return strings.Join(out, " ")
}

func TestFilesInForceNearestLast(t *testing.T) {
	home, ws, other := dir(t), dir(t), dir(t)
	write(t, filepath.Join(home, "AGENTS.md"), "mine")
	write(t, filepath.Join(ws, "AGENTS.md"), "root")
	write(t, filepath.Join(ws, "CLAUDE.md"), "not read: the directory has an AGENTS.md")
	write(t, filepath.Join(ws, "src", "CLAUDE.md"), "src")
	write(t, filepath.Join(ws, "src", "pkg", "AGENTS.md"), "pkg")
	write(t, filepath.Join(ws, "src", "pkg", "a.go"), "package pkg")
	write(t, filepath.Join(other, "AGENTS.md"), "other root")

	dirs := instructions.Dirs([]string{ws, other}, "src/pkg/a.go")
	if len(dirs) != 2 {
		t.Fatalf("dirs %v", dirs)
	}
	l := instructions.NewLoader()
	got := l.Load(home, []string{ws, other}, dirs).Files
	want := "home:" + filepath.Base(home) + "/AGENTS.md root:" + filepath.Base(ws) + "/AGENTS.md dir:src/CLAUDE.md dir:pkg/AGENTS.md root:" + filepath.Base(other) + "/AGENTS.md"
	if paths(got) != want {
		t.Fatalf("files\n got %s\nwant %s", paths(got), want)
	}
	if got[1].Text != "root" || got[2].Text != "src" || got[1].Bytes != 4 || got[1].Hash == "" {
		t.Errorf("content %+v", got[1:3])
	}
	if d := instructions.Dirs([]string{ws}, "/elsewhere/a.go"); d != nil {
		t.Errorf("a path outside the roots has dirs %v", d)
	}
	if d := instructions.Dirs([]string{ws}, filepath.Join(ws, "src")); len(d) != 1 || d[0] != filepath.Join(ws, "src") {
		t.Errorf("a directory's own instructions apply to it: %v", d)
	}
}

func TestALongFileIsCutWithAMarker(t *testing.T) {
	ws := dir(t)
	write(t, filepath.Join(ws, "AGENTS.md"), strings.Repeat("é", 20<<10)) // 40 KiB, two bytes a character
	f := instructions.NewLoader().Load("", []string{ws}, nil).Files
	if len(f) != 1 || !f[0].Cut || f[0].Bytes != 40<<10 {
		t.Fatalf("%+v", f)
	}
	text, marker, _ := strings.Cut(f[0].Text, "\n[kin:")
	if len(text) != instructions.MaxBytes || !strings.Contains(marker, "8192 bytes are not in force") || strings.ContainsRune(text, '\uFFFD') {
		t.Errorf("cut at %d bytes, marker %q", len(text), marker)
	}
}

func TestAChangeIsSeenAndSymlinksOutOfTheFolderAreNot(t *testing.T) {
	ws, secret := dir(t), dir(t)
	p := filepath.Join(ws, "AGENTS.md")
	write(t, p, "one")
	l := instructions.NewLoader()
	before := l.Load("", []string{ws}, nil).Files[0]
	write(t, p, "two, longer")
	later := time.Now().Add(time.Second)
	_ = os.Chtimes(p, later, later)
	after := l.Load("", []string{ws}, nil).Files[0]
	if after.Text != "two, longer" || after.Hash == before.Hash {
		t.Errorf("after a change: %+v", after)
	}

	write(t, filepath.Join(secret, "id_rsa"), "PRIVATE KEY")
	sub := filepath.Join(ws, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(secret, "id_rsa"), filepath.Join(sub, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(secret, "AGENTS.md"), "outside")
	got := l.Load("", []string{ws}, []string{sub, filepath.Join(ws, "out")}).Files
	if len(got) != 1 {
		t.Fatalf("files read through symlinks out of the workspace: %s", paths(got))
	}
}

// BenchmarkLoadFiveFiles is what a turn start pays for instructions: five
// AGENTS.md files (a root and four nested directories), unchanged since the
// last turn.
func BenchmarkLoadFiveFiles(b *testing.B) {
	home, ws := dir(b), dir(b)
	var dirs []string
	d := ws
	write(b, filepath.Join(ws, "AGENTS.md"), strings.Repeat("Run go test ./... before you say done.\n", 100))
	for _, name := range []string{"cmd", "kin", "chat", "internal"} {
		d = filepath.Join(d, name)
		write(b, filepath.Join(d, "AGENTS.md"), strings.Repeat("Keep this package small.\n", 100))
		dirs = append(dirs, d)
	}
	l := instructions.NewLoader()
	if n := len(l.Load(home, []string{ws}, dirs).Files); n != 5 {
		b.Fatalf("%d files", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Load(home, []string{ws}, instructions.Dirs([]string{ws}, filepath.Join(d, "main.go")))
	}
}
