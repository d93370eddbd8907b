package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

func TestWriteFileNew(t *testing.T) {
	root, env := workspace(t)
	a := mustPrepare(t, "write_file", env, map[string]any{"path": "pkg/new.go", "content": "package pkg\n\nvar X = 1\n"})
	ap := a.Approval
	if ap == nil {
		t.Fatal("write without approval")
	}
	if ap.Title != "Write pkg/new.go" || ap.AlwaysAsk {
		t.Fatalf("approval %+v", ap)
	}
	if ap.Grant == nil || ap.Grant.Key != "tool:write_file" || ap.Grant.Label != "Always allow write_file" {
		t.Fatalf("grant %+v", ap.Grant)
	}
	if len(ap.Diffs) != 1 {
		t.Fatalf("diffs %+v", ap.Diffs)
	}
	d := ap.Diffs[0]
	wantUnified := "--- /dev/null\n+++ b/pkg/new.go\n@@ -0,0 +1,3 @@\n+package pkg\n+\n+var X = 1\n"
	if d.Path != filepath.Join(root, "pkg/new.go") || d.OldText != "" || d.NewText != "package pkg\n\nvar X = 1\n" || d.Unified != wantUnified {
		t.Fatalf("diff %+v", d)
	}
	// nothing written before Run
	if _, err := os.Stat(filepath.Join(root, "pkg")); !os.IsNotExist(err) {
		t.Fatal("Prepare wrote something")
	}
	r := a.Run(context.Background(), nil)
	wantStatus(t, r, tool.StatusCompleted)
	if len(r.Content) != 1 || r.Content[0].Type != "diff" || r.Content[0].Diff.Unified != wantUnified {
		t.Fatalf("content %+v", r.Content)
	}
	got, err := os.ReadFile(filepath.Join(root, "pkg/new.go"))
	must(t, err)
	if string(got) != d.NewText {
		t.Fatalf("wrote %q", got)
	}
	fi, _ := os.Stat(filepath.Join(root, "pkg/new.go"))
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	// no temp files left
	ents, _ := os.ReadDir(filepath.Join(root, "pkg"))
	if len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestWriteFileAlwaysAsk(t *testing.T) {
	root, env := workspace(t)
	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(root, "out")))
	cases := map[string]string{
		filepath.Join(outside, "x.txt"): "outside the workspace",
		"../x.txt":                      "outside the workspace",
		"out/x.txt":                     "symlink",
		".env":                          "sensitive",
		".env.local":                    "sensitive",
		"config/.ENV":                   "sensitive",
		".git/hooks/pre-commit":         "run later",
		".kin/mcp.json":                 "run later",
		".vscode/tasks.json":            "run later",
		".github/workflows/ci.yml":      "run later",
		"sub/AGENTS.md":                 "run later",
		"certs/server.pem":              "sensitive",
		"deploy/id_ed25519":             "sensitive",
		"home/.ssh/config":              "sensitive",
		".npmrc":                        "sensitive",
		".aws/credentials":              "sensitive",
	}
	for p, why := range cases {
		a, err := prepare(t, "write_file", env, map[string]any{"path": p, "content": "X=1\n"})
		if err != nil {
			t.Fatalf("%s: writes outside or to sensitive paths are asked, not refused: %v", p, err)
		}
		if !a.Approval.AlwaysAsk || a.Approval.Grant != nil {
			t.Fatalf("%s: want AlwaysAsk and no grant, got %+v", p, a.Approval)
		}
		wantContains(t, a.Approval.Warning, why)
	}
	// a plain file is not
	for _, p := range []string{"env.go", "environment/x", "keys.go", ".gitignore", "src/.github/x.yml"} {
		a := mustPrepare(t, "write_file", env, map[string]any{"path": p, "content": "x\n"})
		if a.Approval.AlwaysAsk || a.Approval.Grant == nil {
			t.Fatalf("%s: %+v", p, a.Approval)
		}
	}
	// the person allowed it: the write outside happens
	p := filepath.Join(outside, "y.txt")
	a := mustPrepare(t, "write_file", env, map[string]any{"path": p, "content": "y\n"})
	if a.Approval.Title != "Write "+p {
		t.Fatalf("title %q", a.Approval.Title)
	}
	wantStatus(t, a.Run(context.Background(), nil), tool.StatusCompleted)
	if b, _ := os.ReadFile(p); string(b) != "y\n" {
		t.Fatalf("outside write: %q", b)
	}
}

func TestWriteFileRefusals(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"d/x": "x"})
	_, err := prepare(t, "write_file", env, map[string]any{"path": "bin", "content": "a\x00b"})
	wantErr(t, err, "NUL")
	_, err = prepare(t, "write_file", env, map[string]any{"path": "d", "content": "x"})
	wantErr(t, err, "is a directory")
	_, err = prepare(t, "write_file", env, map[string]any{"path": "x"})
	wantErr(t, err, `"content" is required`)
	// unchanged content: nothing to approve, nothing written
	a := mustPrepare(t, "write_file", env, map[string]any{"path": "d/x", "content": "x"})
	if a.Approval != nil {
		t.Fatalf("no-op write asks: %+v", a.Approval)
	}
	wantContains(t, a.Run(context.Background(), nil).Output, "nothing written")
}

func TestEditFile(t *testing.T) {
	root, env := workspace(t)
	p := filepath.Join(root, "main.go")
	must(t, os.WriteFile(p, []byte("package main\n\nfunc main() {}\n"), 0o755))

	a := mustPrepare(t, "edit_file", env, map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { run() }"})
	ap := a.Approval
	// the shape rpc/PROTOCOL.md shows
	want := "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n \n-func main() {}\n+func main() { run() }\n"
	if ap.Title != "Edit main.go" || ap.Diffs[0].Unified != want || ap.Grant.Key != "tool:edit_file" || ap.Grant.Label != "Always allow edit_file" {
		t.Fatalf("approval %+v\nunified %q", ap, ap.Diffs[0].Unified)
	}
	r := a.Run(context.Background(), nil)
	wantStatus(t, r, tool.StatusCompleted)
	got, _ := os.ReadFile(p)
	if string(got) != ap.Diffs[0].NewText || string(got) != "package main\n\nfunc main() { run() }\n" {
		t.Fatalf("wrote %q, diff showed %q", got, ap.Diffs[0].NewText)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v, want 0755 kept", fi.Mode().Perm())
	}
	if r.Content[0].Type != "diff" || r.Content[0].Diff.Unified != want {
		t.Fatalf("content %+v", r.Content)
	}
}

func TestEditFileMulti(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	a := mustPrepare(t, "edit_file", env, map[string]any{"path": "a.txt", "edits": []map[string]string{
		{"old_string": "one", "new_string": "uno"},
		{"old_string": "uno\ntwo", "new_string": "uno\ndos"}, // sees the first edit's result
	}})
	if got := a.Approval.Diffs[0].NewText; got != "uno\ndos\nthree\n" {
		t.Fatalf("new text %q", got)
	}
	wantStatus(t, a.Run(context.Background(), nil), tool.StatusCompleted)
}

func TestEditFileErrors(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"x.go": "a := 1\na := 1\na := 1\nb := 2\n", "crlf.txt": "one\r\ntwo\r\n", "bin": "a\x00b"})
	_, err := prepare(t, "edit_file", env, map[string]any{"path": "x.go", "old_string": "a := 1", "new_string": "a := 3"})
	wantErr(t, err, "old_string occurs 3 times in x.go; include more context")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "x.go", "old_string": "c := 3", "new_string": "c := 4"})
	wantErr(t, err, "old_string not found in x.go")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "x.go", "edits": []map[string]string{
		{"old_string": "b := 2", "new_string": "b := 3"},
		{"old_string": "b := 2", "new_string": "b := 4"},
	}})
	wantErr(t, err, "edit 2 of 2: old_string not found")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"})
	wantErr(t, err, "does not exist; use write_file")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "x.go", "old_string": "", "new_string": "b"})
	wantErr(t, err, "old_string is empty")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "x.go", "old_string": "b := 2"})
	wantErr(t, err, "give both")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "x.go"})
	wantErr(t, err, "give old_string and new_string, or edits")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "x.go", "old_string": "b", "new_string": "c", "edits": []map[string]string{{"old_string": "b", "new_string": "c"}}})
	wantErr(t, err, "not both")
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "bin", "old_string": "a", "new_string": "c"})
	wantErr(t, err, "binary")
	// overlapping occurrences count
	files(t, root, map[string]string{"o.txt": "aaa\n"})
	_, err = prepare(t, "edit_file", env, map[string]any{"path": "o.txt", "old_string": "aa", "new_string": "b"})
	wantErr(t, err, "occurs 2 times")
	// CRLF files take LF old_strings
	a := mustPrepare(t, "edit_file", env, map[string]any{"path": "crlf.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"})
	if a.Approval.Diffs[0].NewText != "uno\r\ndos\r\n" {
		t.Fatalf("crlf edit: %q", a.Approval.Diffs[0].NewText)
	}
}

// A CRLF file keeps CRLF line ends whatever the model writes: read_file
// shows it lines without their CR, so a replacement that adds a line
// (old_string one line, new_string two) came in with LF and left the file
// with mixed line ends; an LF old_string with a CRLF new_string got
// "\r\r\n". A file that already mixes them is left as the model wrote.
func TestEditFileKeepsCRLFLineEnds(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"w.txt": "one\r\ntwo\r\nthree\r\n", "m.txt": "a\nb\r\n"})
	for _, c := range []struct{ file, old, new, want string }{
		{"w.txt", "two", "two\nand a half", "one\r\ntwo\r\nand a half\r\nthree\r\n"},
		{"w.txt", "one\ntwo", "uno\r\ndos", "uno\r\ndos\r\nthree\r\n"},
		{"w.txt", "one\r\ntwo", "uno\ndos\r\n2", "uno\r\ndos\r\n2\r\nthree\r\n"},
		{"w.txt", "three", "3\n", "one\r\ntwo\r\n3\r\n\r\n"},
		{"m.txt", "a", "x\ny", "x\ny\nb\r\n"},
	} {
		a := mustPrepare(t, "edit_file", env, map[string]any{"path": c.file, "old_string": c.old, "new_string": c.new})
		if got := a.Approval.Diffs[0].NewText; got != c.want {
			t.Errorf("%s: %q -> %q: new text %q, want %q", c.file, c.old, c.new, got, c.want)
		}
	}
}

// write_file of a CRLF file with the LF text read_file showed keeps the
// file's CRLF line ends: the diff the person approves is the change made,
// not every line; a file with any CR in the new text is written as given.
func TestWriteFileKeepsCRLFLineEnds(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"w.txt": "one\r\ntwo\r\n", "lf.txt": "one\ntwo\n"})
	for _, c := range []struct{ file, content, want string }{
		{"w.txt", "one\n2\n", "one\r\n2\r\n"},
		{"w.txt", "one\r\n2\n", "one\r\n2\n"},
		{"lf.txt", "one\n2\n", "one\n2\n"},
		{"new.txt", "one\n", "one\n"},
	} {
		a := mustPrepare(t, "write_file", env, map[string]any{"path": c.file, "content": c.content})
		d := a.Approval.Diffs[0]
		if d.NewText != c.want {
			t.Errorf("%s: new text %q, want %q", c.file, d.NewText, c.want)
		}
		if c.file == "w.txt" && c.content == "one\n2\n" && strings.Contains(d.Unified, "-one") {
			t.Errorf("%s: the diff changes an unchanged line:\n%s", c.file, d.Unified)
		}
	}
}

// Two approved edits of one file running side by side (delegated
// subagents share the workspace and run at once) each found the content
// they were prepared against and each replaced the file: one change was
// lost and both were reported done. Whatever is reported done is in the
// file; the other edit finds it changed and says so.
func TestConcurrentEditsOfOneFileLoseNothing(t *testing.T) {
	root, env := workspace(t)
	p := filepath.Join(root, "m.go")
	for i := range 20 {
		must(t, os.WriteFile(p, []byte("a\nb\n"), 0o644))
		edits := []*tool.Action{
			mustPrepare(t, "edit_file", env, map[string]any{"path": "m.go", "old_string": "a\n", "new_string": "a\nA\n"}),
			mustPrepare(t, "edit_file", env, map[string]any{"path": "m.go", "old_string": "b\n", "new_string": "b\nB\n"}),
		}
		results := make([]tool.Result, len(edits))
		var wg sync.WaitGroup
		for j, a := range edits {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[j] = a.Run(context.Background(), nil)
			}()
		}
		wg.Wait()
		got, err := os.ReadFile(p)
		must(t, err)
		for j, line := range []string{"A\n", "B\n"} {
			if results[j].Status == tool.StatusCompleted && !strings.Contains(string(got), line) {
				t.Fatalf("round %d: edit %d was reported done (%s) but the file is %q", i, j+1, results[j].Output, got)
			}
		}
	}
}

func TestWriteChangedSincePrepare(t *testing.T) {
	root, env := workspace(t)
	p := filepath.Join(root, "f.txt")
	must(t, os.WriteFile(p, []byte("v1\n"), 0o644))

	edit := mustPrepare(t, "edit_file", env, map[string]any{"path": "f.txt", "old_string": "v1", "new_string": "v2"})
	write := mustPrepare(t, "write_file", env, map[string]any{"path": "f.txt", "content": "v3\n"})
	create := mustPrepare(t, "write_file", env, map[string]any{"path": "g.txt", "content": "new\n"})

	must(t, os.WriteFile(p, []byte("someone else\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "g.txt"), []byte("raced\n"), 0o644))
	for name, a := range map[string]*tool.Action{"edit": edit, "write": write, "create": create} {
		r := a.Run(context.Background(), nil)
		wantStatus(t, r, tool.StatusFailed)
		if !strings.Contains(r.Output, "file changed since the diff was shown; not written") {
			t.Fatalf("%s: %s", name, r.Output)
		}
	}
	if b, _ := os.ReadFile(p); string(b) != "someone else\n" {
		t.Fatalf("overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "g.txt")); string(b) != "raced\n" {
		t.Fatalf("overwritten: %q", b)
	}
	// deleted since prepare
	edit = mustPrepare(t, "edit_file", env, map[string]any{"path": "f.txt", "old_string": "someone", "new_string": "no one"})
	must(t, os.Remove(p))
	wantStatus(t, edit.Run(context.Background(), nil), tool.StatusFailed)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("deleted file recreated")
	}
}

func TestWriteThroughSymlinkKeepsLink(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"real.txt": "old\n"})
	must(t, os.Symlink("real.txt", filepath.Join(root, "alias.txt")))
	a := mustPrepare(t, "write_file", env, map[string]any{"path": "alias.txt", "content": "new\n"})
	if a.Approval.AlwaysAsk {
		t.Fatalf("inside symlink asked always: %+v", a.Approval)
	}
	wantContains(t, a.Approval.Warning, "alias.txt is a symlink to")
	wantStatus(t, a.Run(context.Background(), nil), tool.StatusCompleted)
	if b, _ := os.ReadFile(filepath.Join(root, "real.txt")); string(b) != "new\n" {
		t.Fatalf("target: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(root, "alias.txt")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink replaced by a file")
	}
}

func TestSymlinkedRoot(t *testing.T) {
	real, _ := workspace(t)
	link := filepath.Join(t.TempDir(), "ws")
	must(t, os.Symlink(real, link))
	env := tool.Env{Roots: []string{link}}
	files(t, real, map[string]string{"a.txt": "hello\n", ".git/config": "[core]\n"})

	r := call(t, "read_file", env, map[string]any{"path": "a.txt"})
	wantContains(t, r.Output, "hello")
	r = call(t, "read_file", env, map[string]any{"path": filepath.Join(link, "a.txt")})
	wantContains(t, r.Output, "hello")
	r = call(t, "search", env, map[string]any{"pattern": "hel+o"})
	wantContains(t, r.Output, "a.txt:1: hello")

	a := mustPrepare(t, "edit_file", env, map[string]any{"path": "a.txt", "old_string": "hello", "new_string": "bye"})
	if a.Approval.AlwaysAsk || a.Approval.Warning != "" || a.Approval.Title != "Edit a.txt" {
		t.Fatalf("approval %+v", a.Approval)
	}
	wantStatus(t, a.Run(context.Background(), nil), tool.StatusCompleted)
	// a symlink inside the root into .git is still a write to .git
	must(t, os.Symlink(".git/config", filepath.Join(real, "cfg")))
	a = mustPrepare(t, "write_file", env, map[string]any{"path": "cfg", "content": "x\n"})
	if !a.Approval.AlwaysAsk || a.Approval.Grant != nil {
		t.Fatalf("write through a symlink into .git: %+v", a.Approval)
	}
}
