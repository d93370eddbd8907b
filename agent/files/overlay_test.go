package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOverlayFollowsTheEditor(t *testing.T) {
	dir := tempDir(t)
	p := filepath.Join(dir, "a.go")
	o := NewOverlay()
	uri := "file://" + p
	if _, err := o.Open(uri, p, 1, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	if err := o.Change(uri, 2, []TextChange{{Range: &Range{Start: Position{1, 0}, End: Position{1, 3}}, Text: "2"}}); err != nil {
		t.Fatal(err)
	}
	d, ok := o.Get(p)
	if !ok || d.Text != "one\n2\n" || d.Version != 2 || d.URI != uri {
		t.Fatalf("got %+v, %v", d, ok)
	}
	if err := o.Close(uri); err != nil {
		t.Fatal(err)
	}
	if _, ok := o.Get(p); ok || o.Len() != 0 {
		t.Fatal("closed buffer still there")
	}
	if err := o.Change(uri, 3, nil); err == nil || !strings.Contains(err.Error(), "is not open") {
		t.Fatalf("change of a closed buffer: %v", err)
	}
	if _, err := o.Open("untitled:1", "relative", 1, ""); err == nil {
		t.Fatal("a relative path was accepted")
	}
}

func TestOverlayKeysByRealPath(t *testing.T) {
	dir := tempDir(t)
	real := filepath.Join(dir, "real.go")
	if err := os.WriteFile(real, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.go")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	o := NewOverlay()
	if _, err := o.Open("file://"+link, link, 1, "buffer\n"); err != nil {
		t.Fatal(err)
	}
	if d, ok := o.Get(real); !ok || d.Text != "buffer\n" || d.URI != "file://"+link {
		t.Fatalf("got %+v, %v", d, ok)
	}
	// The same file opened under its own name replaces the other.
	if _, err := o.Open("file://"+real, real, 1, "again\n"); err != nil {
		t.Fatal(err)
	}
	if err := o.Change("file://"+link, 2, nil); err == nil {
		t.Fatal("the replaced URI is still followed")
	}
	if d, _ := o.Get(real); d.Text != "again\n" || o.Len() != 1 {
		t.Fatalf("got %+v", d)
	}
}

func TestOverlayLosesTrackUntilReopened(t *testing.T) {
	p := filepath.Join(tempDir(t), "a.txt")
	uri := "file://" + p
	o := NewOverlay()
	_, _ = o.Open(uri, p, 5, "short\n")
	err := o.Change(uri, 6, []TextChange{{Range: &Range{Start: Position{9, 0}, End: Position{9, 0}}, Text: "x"}})
	if err == nil || !strings.Contains(err.Error(), "line 9 is past the end") {
		t.Fatalf("bad range: %v", err)
	}
	d, _ := o.Get(p)
	if d.Lost == "" {
		t.Fatal("not marked lost")
	}
	// Later changes are not applied to a text kin no longer knows.
	if err := o.Change(uri, 7, []TextChange{{Text: "whole"}}); err != nil {
		t.Fatal(err)
	}
	if d, _ := o.Get(p); d.Lost == "" {
		t.Fatal("a later change brought it back")
	}
	_, _ = o.Open(uri, p, 8, "reopened\n")
	if d, _ := o.Get(p); d.Lost != "" || d.Text != "reopened\n" {
		t.Fatalf("reopen: %+v", d)
	}
	// Versions must increase.
	if err := o.Change(uri, 8, []TextChange{{Text: "same version"}}); err == nil || !strings.Contains(err.Error(), "version 8 after version 8") {
		t.Fatalf("same version: %v", err)
	}
}

func TestOverlayTooLarge(t *testing.T) {
	p := filepath.Join(tempDir(t), "big.log")
	o := NewOverlay()
	_, _ = o.Open("file://"+p, p, 1, strings.Repeat("x", MaxDocument+1))
	if d, _ := o.Get(p); !d.TooLarge || d.Text != "" {
		t.Fatalf("kept a buffer over the limit: %d bytes", len(d.Text))
	}
	_, _ = o.Open("file://"+p, p, 2, "small")
	_ = o.Change("file://"+p, 3, []TextChange{{Text: strings.Repeat("y", MaxDocument+1)}})
	if d, _ := o.Get(p); !d.TooLarge {
		t.Fatal("a buffer grown over the limit is still kept")
	}
}

func TestOverlayAheadUntilTheEditorReports(t *testing.T) {
	p := filepath.Join(tempDir(t), "a.txt")
	uri := "file://" + p
	o := NewOverlay()
	_, _ = o.Open(uri, p, 3, "old\n")
	o.expect(p, 3, "new\n")
	d, _ := o.Get(p)
	if !d.Ahead || d.Text != "new\n" {
		t.Fatalf("got %+v", d)
	}
	done := make(chan Document)
	go func() {
		d, _, _ := o.settled(context.Background(), p)
		done <- d
	}()
	// The editor reports the edit (as a change of the text it had).
	_ = o.Change(uri, 4, []TextChange{{Range: &Range{Start: Position{0, 0}, End: Position{0, 3}}, Text: "new"}})
	if d := <-done; d.Ahead || d.Text != "new\n" || d.Version != 4 {
		t.Fatalf("settled %+v", d)
	}
	// An expectation for an older version is ignored: the editor's report
	// came first.
	o.expect(p, 3, "stale\n")
	if d, _ := o.Get(p); d.Ahead {
		t.Fatal("a stale expectation was kept")
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.expect(p, 4, "newer\n")
	cancel()
	if _, _, err := o.settled(ctx, p); err == nil {
		t.Fatal("settled returned without a report")
	}
}
