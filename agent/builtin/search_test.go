package builtin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

func TestSearch(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{
		".gitignore":       "vendor/\n*.gen.go\n",
		"b.go":             "package b\n// TODO: b\n",
		"a/z.go":           "package a\nfunc Handle() {} // TODO: first\n\n// TODO: second\r\n",
		"a/y.gen.go":       "// TODO: generated\n",
		"vendor/v.go":      "// TODO: vendored\n",
		".git/HEAD":        "TODO in git\n",
		"bin.dat":          "TODO\x00binary",
		"docs/readme.md":   "TODO docs\n",
		"docs/.gitignore":  "*.md\n!keep.md\n",
		"docs/keep.md":     "TODO keep\n",
		"long/minified.js": strings.Repeat("a", 5000) + "TODO-in-long-line" + strings.Repeat("b", 5000) + "\n",
	})
	r := call(t, "search", env, map[string]any{"pattern": `TODO`})
	wantStatus(t, r, tool.StatusCompleted)
	lines := strings.Split(strings.TrimSuffix(r.Output, "\n"), "\n")
	want := []string{
		"a/z.go:2: func Handle() {} // TODO: first",
		"a/z.go:4: // TODO: second",
		"b.go:2: // TODO: b",
		"docs/keep.md:1: TODO keep",
	}
	if len(lines) != len(want)+1 {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want)+1, r.Output)
	}
	for i, w := range want {
		if lines[i] != w {
			t.Fatalf("line %d = %q, want %q\n%s", i, lines[i], w, r.Output)
		}
	}
	long := lines[len(lines)-1]
	if !strings.HasPrefix(long, "long/minified.js:1: …") || !strings.Contains(long, "TODO-in-long-line") || len(long) > 350 {
		t.Fatalf("long line not cut around the match: %q", long)
	}

	// anchors work per line; glob without / matches names, with / paths
	r = call(t, "search", env, map[string]any{"pattern": `^// TODO`, "glob": "*.go"})
	wantContains(t, r.Output, "a/z.go:4:", "b.go:2:")
	wantNotContains(t, r.Output, "a/z.go:2:", "keep.md")
	r = call(t, "search", env, map[string]any{"pattern": `TODO`, "glob": "a/**"})
	wantContains(t, r.Output, "a/z.go:2:")
	wantNotContains(t, r.Output, "b.go")
	// a path narrows, and a single file works even if ignored
	r = call(t, "search", env, map[string]any{"pattern": `TODO`, "path": "vendor/v.go"})
	wantContains(t, r.Output, "vendor/v.go:1: // TODO: vendored")
	r = call(t, "search", env, map[string]any{"pattern": `nothing-here`, "path": "a"})
	wantContains(t, r.Output, "no matches", "in a")

	_, err := prepare(t, "search", env, map[string]any{"pattern": `func (`})
	wantErr(t, err, "bad pattern")
	_, err = prepare(t, "search", env, map[string]any{"pattern": `x`, "maxMatches": 0})
	wantErr(t, err, "maxMatches")
}

func TestSearchCapDeterministic(t *testing.T) {
	root, env := workspace(t)
	for d := 0; d < 20; d++ {
		for f := 0; f < 20; f++ {
			p := filepath.Join(root, fmt.Sprintf("d%02d", d), fmt.Sprintf("f%02d.txt", f))
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte("match one\nno\nmatch two\n"), 0o644))
		}
	}
	var first string
	for i := 0; i < 5; i++ {
		r := call(t, "search", env, map[string]any{"pattern": "^match", "maxMatches": 25})
		if i == 0 {
			first = r.Output
			continue
		}
		if r.Output != first {
			t.Fatalf("run %d differs:\n%s\nvs\n%s", i, r.Output, first)
		}
	}
	lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
	if len(lines) != 26 || lines[0] != "d00/f00.txt:1: match one" || lines[24] != "d00/f12.txt:1: match one" {
		t.Fatalf("unexpected capped output:\n%s", first)
	}
	wantContains(t, lines[25], "stopped at 25 matches")
}

func TestSearchMultipleRoots(t *testing.T) {
	root, env := workspace(t)
	other, _ := workspace(t)
	env.Roots = append(env.Roots, other, filepath.Join(root, "sub")) // a nested root is searched once
	files(t, root, map[string]string{"a.txt": "needle\n", "sub/c.txt": "needle\n"})
	files(t, other, map[string]string{"b.txt": "needle\n"})
	r := call(t, "search", env, map[string]any{"pattern": "needle"})
	if want := "a.txt:1: needle\nsub/c.txt:1: needle\n" + filepath.Join(other, "b.txt") + ":1: needle\n"; r.Output != want {
		t.Fatalf("got\n%s\nwant\n%s", r.Output, want)
	}
	// an absolute path into the second root is inside the workspace
	r = call(t, "read_file", env, map[string]any{"path": filepath.Join(other, "b.txt")})
	wantContains(t, r.Output, "needle")
}

// "Matched against each line without its newline": a CRLF line's newline
// is "\r\n", so a pattern that ends a line with $ finds it. The CR stayed
// in the line matched (and the whole-file prefilter's $ stops before "\n"
// only), so in a Windows file `\{$` found nothing and search said there
// were no matches.
func TestSearchAnchorsAtTheEndOfCRLFLines(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"w.go": "package w\r\n\r\nfunc Main() {\r\n}\r\n", "u.go": "func U() {\n}\n"})
	r := call(t, "search", env, map[string]any{"pattern": `\{$`})
	wantContains(t, r.Output, "w.go:3: func Main() {", "u.go:1: func U() {")
	r = call(t, "search", env, map[string]any{"pattern": `^$`, "path": "w.go"})
	wantContains(t, r.Output, "w.go:2: ")
}
