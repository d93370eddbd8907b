package builtin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

func TestListDir(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{
		".gitignore":          "*.log\n/build/\nnode_modules/\n!keep.log\n",
		".git/config":         "[core]\n",
		".github/ci.yml":      "on: push\n",
		"main.go":             "package main\n",
		"debug.log":           "x",
		"keep.log":            "kept",
		"build/out.bin":       "x",
		"node_modules/m/i.js": "x",
		"src/a.go":            "package src\n",
		"src/.gitignore":      "gen/\n*.tmp\n",
		"src/gen/g.go":        "package gen\n",
		"src/x.tmp":           "x",
		"src/build/b.go":      "package build\n", // /build/ is anchored to the root
	})

	r := call(t, "list_dir", env, map[string]any{})
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, ".github/", "src/", "main.go", "keep.log", ".gitignore")
	wantNotContains(t, r.Output, ".git/\n", "debug.log", "build/", "node_modules")
	wantContains(t, r.Output, fmt.Sprintf("%-7s %10d  %s\n", "file", 13, "main.go"))
	// directories first
	if strings.Index(r.Output, "src/") > strings.Index(r.Output, "main.go") {
		t.Fatalf("directories not listed first:\n%s", r.Output)
	}

	r = call(t, "list_dir", env, map[string]any{"path": "src"})
	wantContains(t, r.Output, "a.go", "build/", ".gitignore")
	wantNotContains(t, r.Output, "gen", "x.tmp")

	r = call(t, "list_dir", env, map[string]any{"glob": "**/*.go"})
	wantContains(t, r.Output, "main.go", "src/a.go", "src/build/b.go")
	wantNotContains(t, r.Output, "src/gen/g.go", "node_modules", ".git/config")

	r = call(t, "list_dir", env, map[string]any{"glob": "*.{go,log}"})
	if got := strings.Count(r.Output, "\n"); got != 2 {
		t.Fatalf("*.{go,log}: %d entries, want main.go and keep.log:\n%s", got, r.Output)
	}

	r = call(t, "list_dir", env, map[string]any{"glob": "**/*.rs"})
	wantContains(t, r.Output, "nothing in")

	_, err := prepare(t, "list_dir", env, map[string]any{"path": "main.go"})
	wantErr(t, err, "not a directory")
	_, err = prepare(t, "list_dir", env, map[string]any{"path": "missing"})
	wantErr(t, err, "does not exist")
	_, err = prepare(t, "list_dir", env, map[string]any{"glob": "[x"})
	wantErr(t, err, "bad glob")
}

func TestListDirCap(t *testing.T) {
	root, env := workspace(t)
	for i := 0; i < 1200; i++ {
		must(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%04d.txt", i)), nil, 0o644))
	}
	r := call(t, "list_dir", env, map[string]any{})
	wantContains(t, r.Output, "f0000.txt", "f0999.txt", "[only the first 1000 entries are listed")
	wantNotContains(t, r.Output, "f1000.txt")
	if n := strings.Count(r.Output, "\n"); n != 1001 {
		t.Fatalf("%d lines, want 1000 entries and a note", n)
	}
}
