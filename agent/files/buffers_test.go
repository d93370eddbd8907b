package files

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeEditor answers edits the way answer says, and applies applied ones
// to the Overlay the way an editor reports them (a didChange).
type fakeEditor struct {
	o      *Overlay
	answer func(ctx context.Context, e Edit) (EditResult, error)

	// mu guards edits and changed.
	mu      sync.Mutex
	edits   []Edit
	changed [][]FileChange
}

func (f *fakeEditor) ApplyEdit(ctx context.Context, e Edit) (EditResult, error) {
	f.mu.Lock()
	f.edits = append(f.edits, e)
	f.mu.Unlock()
	if f.answer != nil {
		return f.answer(ctx, e)
	}
	var changes []TextChange
	for _, te := range e.Edits {
		changes = append(changes, TextChange{Range: &te.Range, Text: te.NewText})
	}
	if err := f.o.Change(e.URI, e.Version+1, changes); err != nil {
		return EditResult{}, err
	}
	return EditResult{Applied: true}, nil
}

func (f *fakeEditor) FilesChanged(c []FileChange) {
	f.mu.Lock()
	f.changed = append(f.changed, c)
	f.mu.Unlock()
}

func setup(t *testing.T, apply bool) (string, *Overlay, *fakeEditor, *Buffers) {
	t.Helper()
	dir := tempDir(t)
	o := NewOverlay()
	ed := &fakeEditor{o: o}
	return dir, o, ed, &Buffers{Overlay: o, Editor: ed, ApplyEdits: apply}
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func openText(t *testing.T, a Access, p string) (string, *File) {
	t.Helper()
	f, err := a.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), f
}

func TestBuffersReadWhatThePersonSees(t *testing.T) {
	dir, o, _, b := setup(t, true)
	p := filepath.Join(dir, "a.txt")
	write(t, p, "saved\n")
	if text, f := openText(t, b, p); text != "saved\n" || f.From != ViaDisk {
		t.Fatalf("closed file: %q from %s", text, f.From)
	}
	_, _ = o.Open("file://"+p, p, 1, "typed\n")
	text, f := openText(t, b, p)
	if text != "typed\n" || f.From != ViaEditor || !f.Unsaved || f.Size != 6 {
		t.Fatalf("open buffer: %q %+v", text, f)
	}
	if buf, ok := b.Buffer(p); !ok || string(buf) != "typed\n" {
		t.Fatalf("Buffer: %q %v", buf, ok)
	}
	_ = o.Change("file://"+p, 2, []TextChange{{Text: "saved\n"}})
	if _, f := openText(t, b, p); f.Unsaved {
		t.Fatal("a buffer equal to the file is unsaved")
	}
	// A buffer of a file not on disk yet is readable.
	n := filepath.Join(dir, "new.txt")
	_, _ = o.Open("file://"+n, n, 1, "draft")
	if text, f := openText(t, b, n); text != "draft" || !f.Unsaved {
		t.Fatalf("new buffer: %q %+v", text, f)
	}
	if _, err := b.Open(context.Background(), filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := b.Open(context.Background(), dir); !errors.Is(err, ErrIsDir) {
		t.Fatalf("dir: %v", err)
	}
}

func TestBuffersEditThroughTheEditor(t *testing.T) {
	dir, o, ed, b := setup(t, true)
	p := filepath.Join(dir, "main.go")
	write(t, p, "package main\n\nfunc main() {}\n")
	uri := "file://" + p
	_, _ = o.Open(uri, p, 7, "package main\n\nfunc main() {}\n// typed, unsaved\n")
	if via, err := b.Plan(context.Background(), p); via != ViaEditor || err != nil {
		t.Fatalf("plan %s %v", via, err)
	}
	old, _ := b.Buffer(p)
	newText := strings.Replace(string(old), "func main() {}", "func main() { run() }", 1)
	w, err := b.Write(context.Background(), Change{Path: p, Old: old, Existed: true, New: []byte(newText), Title: "Edit main.go", SessionID: "s", CallID: "c"})
	if err != nil || w.Via != ViaEditor || w.Saved {
		t.Fatalf("write %+v %v", w, err)
	}
	if got := read(t, p); got != "package main\n\nfunc main() {}\n" {
		t.Fatalf("the disk changed: %q", got)
	}
	if d, _ := o.Get(p); d.Text != newText || d.Version != 8 {
		t.Fatalf("buffer %+v", d)
	}
	e := ed.edits[0]
	if e.URI != uri || e.Version != 7 || e.Label != "Edit main.go" || e.CallID != "c" || len(e.Edits) != 1 ||
		e.Edits[0].Range != (Range{Position{2, 0}, Position{3, 0}}) || e.Edits[0].NewText != "func main() { run() }\n" {
		t.Fatalf("edit %+v", e)
	}
	if len(ed.changed) != 0 {
		t.Fatalf("FilesChanged after an edit in the editor: %v", ed.changed)
	}
	// The buffer changed since the diff was shown: nothing is sent.
	_, err = b.Write(context.Background(), Change{Path: p, Old: old, Existed: true, New: []byte("x")})
	if !errors.Is(err, ErrConflict) || len(ed.edits) != 1 {
		t.Fatalf("stale base: %v, %d edits", err, len(ed.edits))
	}
}

func TestBuffersEditorRefusesOrNeverAnswers(t *testing.T) {
	dir, o, ed, b := setup(t, true)
	p := filepath.Join(dir, "a.txt")
	write(t, p, "a\n")
	_, _ = o.Open("file://"+p, p, 1, "a\n")
	c := Change{Path: p, Old: []byte("a\n"), Existed: true, New: []byte("b\n")}

	ed.answer = func(context.Context, Edit) (EditResult, error) {
		return EditResult{Reason: "the document changed (version 2, not 1)"}, nil
	}
	if _, err := b.Write(context.Background(), c); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "version 2, not 1") {
		t.Fatalf("refused: %v", err)
	}

	// No answer: unknown, and nothing on disk.
	release := make(chan struct{})
	defer close(release)
	ed.answer = func(ctx context.Context, e Edit) (EditResult, error) {
		select {
		case <-ctx.Done():
			return EditResult{}, ctx.Err()
		case <-release:
			return EditResult{Applied: true}, nil
		}
	}
	b.Timeout = 1 // the bound, whatever it is, runs out
	_, err := b.Write(context.Background(), c)
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("no answer: %v", err)
	}
	b.Timeout = 0
	ctx, cancel := context.WithCancel(context.Background())
	ed.answer = func(context.Context, Edit) (EditResult, error) {
		cancel() // the turn is cancelled while the editor works
		return EditResult{}, context.Canceled
	}
	if _, err := b.Write(ctx, c); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("cancelled: %v", err)
	}
	if got := read(t, p); got != "a\n" || len(ed.changed) != 0 {
		t.Fatalf("written on disk: %q %v", got, ed.changed)
	}
	if len(ed.edits) != 3 {
		t.Fatalf("%d edits sent, want one per write", len(ed.edits))
	}
}

func TestBuffersWaitForTheReportOfTheLastEdit(t *testing.T) {
	dir, o, ed, b := setup(t, true)
	p := filepath.Join(dir, "a.txt")
	uri := "file://" + p
	_, _ = o.Open(uri, p, 1, "one\n")
	// The editor answers before it reports the change.
	var report func()
	ed.answer = func(_ context.Context, e Edit) (EditResult, error) {
		report = func() {
			_ = o.Change(e.URI, e.Version+1, []TextChange{{Range: &e.Edits[0].Range, Text: e.Edits[0].NewText}})
		}
		return EditResult{Applied: true}, nil
	}
	if _, err := b.Write(context.Background(), Change{Path: p, Old: []byte("one\n"), Existed: true, New: []byte("two\n")}); err != nil {
		t.Fatal(err)
	}
	if text, _ := b.Buffer(p); string(text) != "two\n" {
		t.Fatalf("read before the report: %q", text)
	}
	ed.answer = nil
	done := make(chan error)
	go func() {
		_, err := b.Write(context.Background(), Change{Path: p, Old: []byte("two\n"), Existed: true, New: []byte("three\n")})
		done <- err
	}()
	report()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if d, _ := o.Get(p); d.Text != "three\n" || d.Version != 3 || ed.edits[1].Version != 2 {
		t.Fatalf("buffer %+v, edit %+v", d, ed.edits[1])
	}
}

func TestBuffersWithoutApplyEdits(t *testing.T) {
	dir, o, ed, b := setup(t, false)
	p := filepath.Join(dir, "a.txt")
	write(t, p, "a\n")
	uri := "file://" + p
	// A clean buffer: disk, then the editor is told to reload it.
	_, _ = o.Open(uri, p, 1, "a\n")
	w, err := b.Write(context.Background(), Change{Path: p, Old: []byte("a\n"), Existed: true, New: []byte("b\n")})
	if err != nil || w.Via != ViaDisk || !w.Saved || read(t, p) != "b\n" {
		t.Fatalf("write %+v %v", w, err)
	}
	if len(ed.changed) != 1 || ed.changed[0][0] != (FileChange{Path: p}) {
		t.Fatalf("changed %v", ed.changed)
	}
	if text, _ := b.Buffer(p); string(text) != "b\n" {
		t.Fatalf("before the reload kin reads %q", text)
	}
	_ = o.Change(uri, 2, []TextChange{{Text: "b\n"}}) // the reload
	// Unsaved changes: refused, at Plan and at Write.
	_ = o.Change(uri, 3, []TextChange{{Text: "b\ntyped\n"}})
	if _, err := b.Plan(context.Background(), p); !errors.Is(err, ErrUnsaved) {
		t.Fatalf("plan: %v", err)
	}
	_, err = b.Write(context.Background(), Change{Path: p, Old: []byte("b\ntyped\n"), Existed: true, New: []byte("c\n")})
	if !errors.Is(err, ErrUnsaved) || !strings.Contains(err.Error(), "save or close the file") || read(t, p) != "b\n" {
		t.Fatalf("unsaved: %v", err)
	}
	if len(ed.edits) != 0 {
		t.Fatal("an edit was sent to an editor that does not apply them")
	}
	// A file that is not open: disk, created.
	n := filepath.Join(dir, "sub", "new.txt")
	if _, err := b.Write(context.Background(), Change{Path: n, New: []byte("x")}); err != nil || read(t, n) != "x" {
		t.Fatal(err)
	}
	if last := ed.changed[len(ed.changed)-1]; last[0] != (FileChange{Path: n, Created: true}) {
		t.Fatalf("changed %v", last)
	}
}

func TestBuffersLostBufferIsNeitherReadNorWritten(t *testing.T) {
	dir, o, ed, b := setup(t, true)
	p := filepath.Join(dir, "a.txt")
	write(t, p, "a\n")
	uri := "file://" + p
	_, _ = o.Open(uri, p, 1, "a\n")
	_ = o.Change(uri, 2, []TextChange{{Range: &Range{Start: Position{5, 0}, End: Position{5, 0}}}})
	if _, err := b.Open(context.Background(), p); !errors.Is(err, ErrOutOfSync) || !strings.Contains(err.Error(), "open it again") {
		t.Fatalf("open: %v", err)
	}
	if _, ok := b.Buffer(p); ok {
		t.Fatal("Buffer of a lost buffer")
	}
	if _, err := b.Write(context.Background(), Change{Path: p, Old: []byte("a\n"), Existed: true, New: []byte("b\n")}); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("write: %v", err)
	}
	if read(t, p) != "a\n" || len(ed.edits) != 0 {
		t.Fatal("written")
	}
}

func TestDiskWriteChecksTheBase(t *testing.T) {
	p := filepath.Join(tempDir(t), "a.txt")
	write(t, p, "a\n")
	if _, err := (Disk{}).Write(context.Background(), Change{Path: p, Old: []byte("other\n"), Existed: true, New: []byte("b\n")}); !errors.Is(err, ErrConflict) {
		t.Fatalf("changed file: %v", err)
	}
	if _, err := (Disk{}).Write(context.Background(), Change{Path: p, New: []byte("b\n")}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a file appeared: %v", err)
	}
	if read(t, p) != "a\n" {
		t.Fatal("written")
	}
}

func TestWithBeforeWriteSeesThePreviousContent(t *testing.T) {
	p := filepath.Join(tempDir(t), "a.txt")
	write(t, p, "before\n")
	var seen []Change
	a := WithBeforeWrite(Disk{}, func(_ context.Context, c Change) error {
		seen = append(seen, c)
		if string(c.New) == "refuse\n" {
			return errors.New("could not keep a checkpoint")
		}
		return nil
	})
	if _, err := a.Write(context.Background(), Change{Path: p, Old: []byte("before\n"), Existed: true, New: []byte("after\n"), TurnID: "t1"}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Write(context.Background(), Change{Path: p, Old: []byte("after\n"), Existed: true, New: []byte("refuse\n")})
	if err == nil || !strings.Contains(err.Error(), "not written: could not keep a checkpoint") || read(t, p) != "after\n" {
		t.Fatalf("hook error: %v", err)
	}
	if len(seen) != 2 || string(seen[0].Old) != "before\n" || seen[0].TurnID != "t1" {
		t.Fatalf("seen %+v", seen)
	}
}

// Unsaved lists the buffers a command would not see (it reads the disk),
// found through the wrappers the tools get; Changed wakes at the editor's
// next report.
func TestUnsavedBuffersAndChanges(t *testing.T) {
	dir, o, _, b := setup(t, true)
	clean, typed, fresh := filepath.Join(dir, "clean.go"), filepath.Join(dir, "typed.go"), filepath.Join(dir, "new.go")
	write(t, clean, "package a\n")
	write(t, typed, "package a\n")
	for p, text := range map[string]string{clean: "package a\n", typed: "package a\n\nvar x = 1\n", fresh: "package a\n"} {
		if _, err := o.Open("file://"+p, p, 1, text); err != nil {
			t.Fatal(err)
		}
	}
	var a Access = WithBeforeWrite(b, func(context.Context, Change) error { return nil })
	l, ok := Find[UnsavedLister](a)
	if !ok {
		t.Fatal("Find does not see through WithBeforeWrite")
	}
	if got := strings.Join(l.Unsaved(), ","); got != fresh+","+typed {
		t.Errorf("unsaved %s", got)
	}
	if _, ok := Find[UnsavedLister](Disk{}); ok {
		t.Error("the disk has no buffers")
	}
	w, _ := Find[Watcher](a)
	ch := w.Changed()
	select {
	case <-ch:
		t.Fatal("closed before any change")
	default:
	}
	if err := o.Change("file://"+clean, 2, []TextChange{{Text: "package b\n"}}); err != nil {
		t.Fatal(err)
	}
	<-ch
}
