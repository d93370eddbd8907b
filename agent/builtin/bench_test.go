package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

// buildTree writes n Go-like files of about 2.5 KB in n/100 directories;
// every 200th file has one line matching benchPattern.
func buildTree(tb testing.TB, root string, n int) {
	tb.Helper()
	var body strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&body, "\tx%d := compute(%d, \"some string literal %d\") // a comment\n", i, i, i)
	}
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", i/100))
		if i%100 == 0 {
			must(tb, os.MkdirAll(dir, 0o755))
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "package pkg%03d\n\nimport \"fmt\"\n\nfunc F%d() {\n%s}\n", i/100, i, body.String())
		if i%200 == 0 {
			fmt.Fprintf(&sb, "\nfunc HandleItemRequest%d(w Writer, r *Request) {}\n", i)
		}
		must(tb, os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%05d.go", i)), []byte(sb.String()), 0o644))
	}
}

const benchPattern = `func Handle[A-Z][a-z]+Request[0-9]+\(`

func TestSearchTreeMatchesGrep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2,000-file tree")
	}
	root, env := workspace(t)
	buildTree(t, root, 2000)
	r := call(t, "search", env, map[string]any{"pattern": benchPattern})
	wantStatus(t, r, tool.StatusCompleted)
	if n := strings.Count(r.Output, "\n"); n != 10 {
		t.Fatalf("%d matches, want 10:\n%s", n, r.Output)
	}
	wantContains(t, r.Output, "pkg000/file00000.go:68: func HandleItemRequest0(w Writer, r *Request) {}\n")
	// the same lines grep finds, in path order
	grep, err := exec.LookPath("grep")
	if err != nil {
		return
	}
	cmd := exec.Command(grep, "-rnE", benchPattern, ".")
	cmd.Dir = root
	out, err := cmd.Output()
	must(t, err)
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(strings.TrimPrefix(l, "./"), ":", 3)
		want = append(want, f[0]+":"+f[1]+": "+f[2])
	}
	sort.Strings(want)
	if got := strings.TrimSpace(r.Output); got != strings.Join(want, "\n") {
		t.Fatalf("search and grep differ:\n%s\n---\n%s", got, strings.Join(want, "\n"))
	}
}

func BenchmarkSearch10kFiles(b *testing.B) {
	root, env := workspace(b)
	buildTree(b, root, 10000)
	b.Run("kin", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a := mustPrepare(b, "search", env, map[string]any{"pattern": benchPattern})
			r := a.Run(context.Background(), nil)
			if r.Status != tool.StatusCompleted || strings.Count(r.Output, "\n") != 50 {
				b.Fatalf("%s: %s", r.Status, r.Output)
			}
		}
	})
	b.Run("grep", func(b *testing.B) {
		grep, err := exec.LookPath("grep")
		if err != nil {
			b.Skip("no grep")
		}
		b.ReportAllocs()
		for b.Loop() {
			out, err := exec.Command(grep, "-rnE", benchPattern, root).Output()
			if err != nil || strings.Count(string(out), "\n") != 50 {
				b.Fatalf("grep: %v: %s", err, out)
			}
		}
	})
}

func BenchmarkReadFile5MB(b *testing.B) {
	root, env := workspace(b)
	p := filepath.Join(root, "big.log")
	writeBigFile(b, p, 5<<20)
	b.Run("kin", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a := mustPrepare(b, "read_file", env, map[string]any{"path": "big.log"})
			r := a.Run(context.Background(), nil)
			if r.Status != tool.StatusCompleted {
				b.Fatal(r.Output)
			}
		}
	})
	b.Run("kin-last-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			a := mustPrepare(b, "read_file", env, map[string]any{"path": "big.log", "offset": 60000})
			r := a.Run(context.Background(), nil)
			if r.Status != tool.StatusCompleted {
				b.Fatal(r.Output)
			}
		}
	})
	// in-process floor: read all of it and count the lines, no paging
	b.Run("os.ReadFile", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := os.ReadFile(p)
			if err != nil || bytes.Count(data, []byte{'\n'}) == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("cat", func(b *testing.B) {
		cat, err := exec.LookPath("cat")
		if err != nil {
			b.Skip("no cat")
		}
		b.ReportAllocs()
		for b.Loop() {
			cmd := exec.Command(cat, p) // stdout: the null device
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
