package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/instructions"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/tool"
)

func workspace(t testing.TB) string {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPartsAreCheckedAndAFileIsReadLikeReadFile(t *testing.T) {
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n\nfunc A() {}\n// end\n")
	env := tool.Env{Roots: []string{ws}, Files: files.Disk{}}
	tools := tool.Static(builtin.Tools(builtin.Options{})).Tools
	q, err := assemble(Input{Parts: []Part{
		{Type: "text", Text: "why is this"},
		{Type: "file", Path: "a.go", Range: &Range{Start: Position{Line: 2}, End: Position{Line: 3}}},
		{Type: "text", Text: "slow?"},
	}}, env, model.Config{}, tools, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.rec.Text != "why is this\n\nslow?" || len(q.rec.Parts) != 3 || q.touched[0] != "a.go" {
		t.Fatalf("record %+v", q.rec)
	}
	if got := framed(q.rec.Parts[1]).Text; got != "<file path=\"a.go\" lines=\"3\">\n     3\tfunc A() {}\n[showing lines 3-3 of 4; call again with offset=4]\n</file>" {
		t.Errorf("file part as the model reads it:\n%s", got)
	}

	bad := []struct {
		part Part
		cfg  model.Config
		want string
	}{
		{Part{Type: "file", Path: "../etc/passwd"}, model.Config{}, "input[1] (file): ../etc/passwd: refused: ../etc/passwd is outside the workspace"},
		{Part{Type: "file", Path: "missing.go"}, model.Config{}, "input[1] (file): missing.go: missing.go does not exist"},
		{Part{Type: "selection", Path: "a.go"}, model.Config{}, "input[1] (selection): path and range are required"},
		{Part{Type: "diagnostics", Path: "a.go", Items: []Diagnostic{{Message: "x", Severity: "fatal"}}}, model.Config{}, `severity "fatal"`},
		{Part{Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}, model.Config{Model: "local", NoImages: true}, "input[1] (image): the model local does not take images"},
		{Part{Type: "image", MimeType: "image/png", Data: "not base64!"}, model.Config{}, "data is not base64"},
		{Part{Type: "image", MimeType: "image/tiff", Data: "AAAA"}, model.Config{}, `mimeType "image/tiff"`},
		{Part{Type: "video"}, model.Config{}, "input[1] (video): unknown part type"},
		{Part{Type: "resource", Text: "x"}, model.Config{}, "uri is required"},
	}
	for _, b := range bad {
		_, err := assemble(Input{Parts: []Part{{Type: "text", Text: "look"}, b.part}}, env, b.cfg, tools, nil)
		var pe *PartError
		if !errors.As(err, &pe) || pe.Index != 1 || !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), "invalid params: ") {
			t.Errorf("%+v: error %v, want %q", b.part, err, b.want)
		}
	}
	if _, err := assemble(Input{Parts: []Part{{Type: "text", Text: "  "}}}, env, model.Config{}, tools, nil); err == nil {
		t.Error("an empty question was taken")
	}
}

// BenchmarkTurnStartContext is what instructions loading and input-part
// assembly add to a turn's start: five AGENTS.md files (a root and four
// nested directories, unchanged since the last turn), a question with a
// selection, diagnostics and a file of the nested directory, and the
// request's instructions built from them.
func BenchmarkTurnStartContext(b *testing.B) {
	home, ws := workspace(b), workspace(b)
	writeFile(b, filepath.Join(ws, "AGENTS.md"), strings.Repeat("Run go test ./... before you say done.\n", 60))
	d := ws
	for _, name := range []string{"cmd", "kin", "chat", "internal"} {
		d = filepath.Join(d, name)
		writeFile(b, filepath.Join(d, "AGENTS.md"), strings.Repeat("Keep this package small.\n", 60))
	}
	file := filepath.Join(d, "main.go")
	writeFile(b, file, strings.Repeat("func f() { return }\n", 300))
	env := tool.Env{Roots: []string{ws}, Files: files.Disk{}}
	tools := tool.Static(builtin.Tools(builtin.Options{})).Tools
	in := Input{Parts: []Part{
		{Type: "text", Text: "why does this fail?"},
		{Type: "selection", Path: file, Range: &Range{Start: Position{Line: 10}, End: Position{Line: 12}}, Text: "func f() { return }\nfunc f() { return }\n"},
		{Type: "diagnostics", Path: file, Items: []Diagnostic{{Range: Range{Start: Position{Line: 10}, End: Position{Line: 10, Character: 6}}, Severity: "error", Message: "f redeclared", Source: "compiler"}}},
		{Type: "file", Path: file, Range: &Range{Start: Position{Line: 0}, End: Position{Line: 40}}},
	}}
	loader := instructions.NewLoader()
	var dirs []string
	for _, p := range []string{file} {
		dirs = append(dirs, instructions.Dirs(env.Roots, p)...)
	}
	if n := len(loader.Load(home, env.Roots, dirs).Files); n != 5 {
		b.Fatalf("%d files in force", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		q, err := assemble(in, env, model.Config{}, tools, nil)
		if err != nil {
			b.Fatal(err)
		}
		var ds []string
		for _, p := range q.touched {
			ds = append(ds, instructions.Dirs(env.Roots, p)...)
		}
		fs := loader.Load(home, env.Roots, ds)
		_ = requestInstructions("", env.Roots, fs)
		for _, p := range q.rec.Parts {
			_ = framed(p)
		}
	}
}

// A resource part naming an MCP server is read from it when the question
// is asked (the reader frames it as the server's untrusted data); a server
// kin cannot read from refuses the question, nothing sent.
func TestAResourcePartIsReadFromItsServer(t *testing.T) {
	env := tool.Env{}
	tools := tool.Static(nil).Tools
	var asked []string
	read := func(server, uri string) (string, error) {
		asked = append(asked, server+" "+uri)
		if server != "docs" {
			return "", fmt.Errorf("no connected MCP server %q offers resources", server)
		}
		return "<untrusted-mcp-result server=\"docs\" tool=\"resource\">\nreadme text\n</untrusted-mcp-result>", nil
	}
	q, err := assemble(Input{Parts: []Part{{Type: "text", Text: "summarise"}, {Type: "resource", Server: "docs", URI: "docs://readme", Text: "the editor's claim"}}},
		env, model.Config{}, tools, read)
	if err != nil {
		t.Fatal(err)
	}
	got := framed(q.rec.Parts[1]).Text
	if got != "<resource server=\"docs\" uri=\"docs://readme\">\n<untrusted-mcp-result server=\"docs\" tool=\"resource\">\nreadme text\n</untrusted-mcp-result>\n</resource>" {
		t.Fatalf("resource part as the model reads it:\n%s", got)
	}
	_, err = assemble(Input{Parts: []Part{{Type: "resource", Server: "evil", URI: "x://y"}}}, env, model.Config{}, tools, read)
	if err == nil || !strings.Contains(err.Error(), `input[0] (resource): no connected MCP server "evil"`) {
		t.Fatalf("unknown server: %v", err)
	}
	if _, err = assemble(Input{Parts: []Part{{Type: "resource", Server: "docs", URI: "docs://readme"}}}, env, model.Config{}, tools, nil); err == nil {
		t.Fatal("a resource part was taken with no reader")
	}
	if len(asked) != 2 {
		t.Fatalf("reads %v", asked)
	}
}
