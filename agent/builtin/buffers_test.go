package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kinfiles "github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/tool"
)

// stubEditor applies every edit to the overlay, as an editor reports it.
type stubEditor struct {
	o       *kinfiles.Overlay
	changed []kinfiles.FileChange
}

func (s *stubEditor) ApplyEdit(_ context.Context, e kinfiles.Edit) (kinfiles.EditResult, error) {
	te := e.Edits[0]
	err := s.o.Change(e.URI, e.Version+1, []kinfiles.TextChange{{Range: &te.Range, Text: te.NewText}})
	return kinfiles.EditResult{Applied: err == nil}, err
}

func (s *stubEditor) FilesChanged(c []kinfiles.FileChange) { s.changed = append(s.changed, c...) }

// withBuffers gives env an editor's buffers: path open with text.
func withBuffers(t *testing.T, env tool.Env, apply bool, path, text string) (tool.Env, *stubEditor) {
	t.Helper()
	o := kinfiles.NewOverlay()
	if _, err := o.Open("file://"+path, path, 1, text); err != nil {
		t.Fatal(err)
	}
	ed := &stubEditor{o: o}
	env.Files = &kinfiles.Buffers{Overlay: o, Editor: ed, ApplyEdits: apply}
	return env, ed
}

func TestToolsSeeTheEditorsBuffer(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a.go": "package a\n"})
	p := filepath.Join(root, "a.go")
	env, ed := withBuffers(t, env, true, p, "package a\n\nvar unsaved = 1\n")

	r := call(t, "read_file", env, map[string]any{"path": "a.go"})
	wantContains(t, r.Output, "     3\tvar unsaved = 1\n", "[a.go has unsaved changes in the editor")
	r = call(t, "search", env, map[string]any{"pattern": "unsaved ="})
	wantContains(t, r.Output, "a.go:3: var unsaved = 1")

	_, err := prepare(t, "edit_file", env, map[string]any{"path": "a.go", "old_string": "var saved", "new_string": "x"})
	wantErr(t, err, "old_string not found in a.go (as open in the editor, with unsaved changes)")

	a := mustPrepare(t, "edit_file", env, map[string]any{"path": "a.go", "old_string": "unsaved = 1", "new_string": "unsaved = 2"})
	if d := a.Approval.Diffs[0]; d.OldText != "package a\n\nvar unsaved = 1\n" || d.NewText != "package a\n\nvar unsaved = 2\n" {
		t.Fatalf("diff %+v", d)
	}
	r = a.Run(context.Background(), nil)
	wantStatus(t, r, tool.StatusCompleted)
	wantContains(t, r.Output, "edited a.go (+1 -1 lines) in the editor's buffer, not saved yet")
	if b, _ := os.ReadFile(p); string(b) != "package a\n" || len(ed.changed) != 0 {
		t.Fatalf("the disk changed: %q", b)
	}
	if text, _ := env.Files.Buffer(p); string(text) != "package a\n\nvar unsaved = 2\n" {
		t.Fatalf("buffer %q", text)
	}
}

func TestWriteToAnUnsavedBufferIsRefusedBeforeAsking(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a.txt": "a\n"})
	env, _ = withBuffers(t, env, false, filepath.Join(root, "a.txt"), "a\ntyped\n")
	_, err := prepare(t, "write_file", env, map[string]any{"path": "a.txt", "content": "b\n"})
	wantErr(t, err, "write_file: a.txt has unsaved changes in the editor, and this editor does not let kin edit its buffers: save or close the file, then ask again")
}

// countingAccess counts the reads that go through an Access (an ACP
// client's reads are requests to it).
type countingAccess struct {
	kinfiles.Access
	opens int
}

func (c *countingAccess) Open(ctx context.Context, path string) (*kinfiles.File, error) {
	c.opens++
	return c.Access.Open(ctx, path)
}

func TestReadFileReadsOnce(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a.go": "package a\n"})
	env, _ = withBuffers(t, env, true, filepath.Join(root, "a.go"), "package a\n\nvar unsaved = 1\n")
	ca := &countingAccess{Access: env.Files}
	env.Files = ca
	r := call(t, "read_file", env, map[string]any{"path": "a.go"})
	wantContains(t, r.Output, "     3\tvar unsaved = 1\n")
	if ca.opens != 1 {
		t.Fatalf("read_file read the file %d times", ca.opens)
	}
}

// A command reads the disk: its approval names the open files whose
// changes it will not see, as a field and in the warning; a clean buffer
// and a front end without buffers add nothing.
func TestACommandsApprovalNamesTheUnsavedFiles(t *testing.T) {
	root, env := workspace(t)
	files(t, root, map[string]string{"a.go": "package a\n", "sub/b.go": "package b\n"})
	plain := mustPrepare(t, "bash", env, map[string]any{"command": "go test ./..."})
	if plain.Approval.UnsavedFiles != nil || strings.Contains(plain.Approval.Warning, "unsaved") {
		t.Fatalf("without an editor: %+v", plain.Approval)
	}
	env, _ = withBuffers(t, env, true, filepath.Join(root, "a.go"), "package a\n")
	clean := mustPrepare(t, "bash", env, map[string]any{"command": "go test ./..."})
	if clean.Approval.UnsavedFiles != nil || strings.Contains(clean.Approval.Warning, "unsaved") {
		t.Fatalf("a clean buffer: %+v", clean.Approval)
	}
	o := env.Files.(*kinfiles.Buffers).Overlay
	b := filepath.Join(root, "sub", "b.go")
	if _, err := o.Open("file://"+b, b, 1, "package b\n\nvar typed = 1\n"); err != nil {
		t.Fatal(err)
	}
	// Through the wrappers the session's tools get (checkpoints, hooks).
	env.Files = kinfiles.WithBeforeWrite(env.Files, func(context.Context, kinfiles.Change) error { return nil })
	a := mustPrepare(t, "bash", env, map[string]any{"command": "go test ./..."}).Approval
	if strings.Join(a.UnsavedFiles, ",") != "sub/b.go" {
		t.Fatalf("unsavedFiles %q", a.UnsavedFiles)
	}
	wantContains(t, a.Warning, "The command sees the saved files, not the unsaved changes in: sub/b.go.")
}
