package chat

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestMentions(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{"main.go", "cmd/kin/chat.go", ".env"} {
		p := filepath.Join(ws, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs := func(p string) string { return filepath.Join(ws, p) }
	for _, c := range []struct {
		text string
		want []mention
	}{
		{"explain @main.go please", []mention{{path: abs("main.go")}}},
		{"@main.go, and @cmd/kin/chat.go.", []mention{{path: abs("main.go")}, {path: abs("cmd/kin/chat.go")}}},
		{"lines @main.go:3 and @main.go:10-20", []mention{{path: abs("main.go"), from: 3, to: 3}, {path: abs("main.go"), from: 10, to: 20}}},
		{"ask @ana, mail ana@example.com, @cmd (a folder), @nothing.go", nil},
		{"twice @main.go @main.go " + "@" + abs("main.go"), []mention{{path: abs("main.go")}}},
		{"bad ranges @main.go:0 @main.go:5-2", nil},
	} {
		if got := mentions(c.text, ws); !reflect.DeepEqual(got, c.want) {
			t.Errorf("mentions(%q) = %v, want %v", c.text, got, c.want)
		}
	}

	comp := newCompleter(ws)
	for _, c := range []struct {
		line string
		want []string
		n    int
	}{
		{"look at @ma", []string{"in.go "}, 2},
		{"look at @c", []string{"md/"}, 1},
		{"look at @cmd/kin/", []string{"chat.go "}, 8},
		{"@.e", []string{"nv "}, 2},
		{"/he", []string{"lp "}, 3},
		{"say /he", nil, 3},
	} {
		r := []rune(c.line)
		got, n := comp.Do(r, len(r))
		var s []string
		for _, g := range got {
			s = append(s, string(g))
		}
		if !reflect.DeepEqual(s, c.want) || n != c.n {
			t.Errorf("Do(%q) = %q, %d; want %q, %d", c.line, s, n, c.want, c.n)
		}
	}
}

// Tab completes the commands /help lists, and nothing else its text names.
func TestBuiltinCommands(t *testing.T) {
	want := []string{"/new", "/sessions", "/resume", "/cancel", "/model", "/compact", "/mcp", "/resources", "/template", "/saw", "/open", "/grants", "/plan", "/mode", "/undo", "/usage", "/steer", "/rollback", "/fork", "/review", "/worktree", "/commands", "/quit", "/help"}
	if got := builtinCommands(); !reflect.DeepEqual(got, want) {
		t.Errorf("builtinCommands() = %q, want %q", got, want)
	}
}
