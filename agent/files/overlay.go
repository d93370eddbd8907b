package files

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/kin-dev/kin/agent/boundary"
)

// MaxDocument is the largest buffer an Overlay follows. A larger one is
// read from disk and never edited (kin edits files up to 8 MiB anyway).
const MaxDocument = 8 << 20

// Overlay is what an editor has open, as it reported it with didOpen,
// didChange and didClose: per file, the buffer's text and version. It
// belongs to one connection (what that editor has open) and serves every
// session on it. Positions count UTF-16 code units, as LSP's do.
//
// Calls come in the order the editor sent them (the front end handles
// these notifications in its read loop), and are cheap: no I/O.
type Overlay struct {
	// mu guards docs, byURI and changed.
	mu    sync.Mutex
	docs  map[string]*doc   // by real path
	byURI map[string]string // editor URI -> real path
	// changed is closed (and replaced) on every change, so Buffers can
	// wait for the editor to report the result of kin's own edit.
	changed chan struct{}
}

// doc is one open buffer.
type doc struct {
	uri     string
	path    string
	version int64
	text    string
	// lost says why kin no longer knows the buffer's text ("" while in
	// step); a didOpen of the same document brings it back.
	lost string
	// tooLarge marks a buffer over MaxDocument: read from disk, not edited.
	tooLarge bool
	// ahead is what kin knows the buffer holds after its own write, until
	// the editor reports a change (which supersedes it).
	ahead *string
}

// Document is a snapshot of one open buffer.
type Document struct {
	URI     string
	Path    string
	Version int64
	// Text is what the buffer holds, as far as kin knows: the editor's
	// last report, or the result of kin's own edit not yet reported.
	Text string
	// Ahead is set when Text is kin's own edit, not yet reported.
	Ahead    bool
	Lost     string
	TooLarge bool
}

// ErrNotOpen: a change or close of a buffer that was never opened.
var ErrNotOpen = errors.New("is not open")

// NewOverlay returns an empty Overlay.
func NewOverlay() *Overlay {
	return &Overlay{docs: map[string]*doc{}, byURI: map[string]string{}, changed: make(chan struct{})}
}

// Open records a buffer the editor opened (or reopened: it replaces what
// was there, and brings back a buffer kin had lost track of). path is the
// file the URI names; it is keyed by its real path. It returns what kin
// keeps of the buffer.
func (o *Overlay) Open(uri, path string, version int64, text string) (Document, error) {
	if !filepath.IsAbs(path) {
		return Document{}, fmt.Errorf("%s: not an absolute file path", uri)
	}
	real := boundary.RealPath(filepath.Clean(path))
	d := &doc{uri: uri, path: real, version: version, text: text}
	if len(text) > MaxDocument {
		d.text, d.tooLarge = "", true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if old, ok := o.docs[real]; ok && old.uri != uri {
		delete(o.byURI, old.uri) // the same file under another name
	}
	if oldPath, ok := o.byURI[uri]; ok && oldPath != real {
		delete(o.docs, oldPath)
	}
	o.docs[real] = d
	o.byURI[uri] = real
	o.changedLocked()
	return d.snapshot(), nil
}

// Change applies a didChange. version must be greater than the last one.
// A change that cannot be applied makes kin lose track of the buffer: it
// is neither read nor edited until the editor opens it again, and the
// error says why.
func (o *Overlay) Change(uri string, version int64, changes []TextChange) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	d := o.docs[o.byURI[uri]]
	if d == nil {
		return fmt.Errorf("%s %w (no textDocument/didOpen)", uri, ErrNotOpen)
	}
	defer o.changedLocked()
	d.ahead = nil
	if d.lost != "" || d.tooLarge {
		d.version = version
		return nil
	}
	if version <= d.version {
		d.lost = fmt.Sprintf("version %d after version %d (versions must increase)", version, d.version)
		return errors.New(d.lost)
	}
	text, err := apply(d.text, changes)
	if err != nil {
		d.lost = err.Error()
		return err
	}
	d.version = version
	if len(text) > MaxDocument {
		d.text, d.tooLarge = "", true
		return nil
	}
	d.text = text
	return nil
}

// Lose marks a buffer as no longer known (a change the front end could not
// even read), until the editor opens it again.
func (o *Overlay) Lose(uri, why string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d := o.docs[o.byURI[uri]]; d != nil && d.lost == "" {
		d.lost, d.ahead = why, nil
		o.changedLocked()
	}
}

// Close forgets a buffer the editor closed.
func (o *Overlay) Close(uri string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	path, ok := o.byURI[uri]
	if !ok {
		return fmt.Errorf("%s %w", uri, ErrNotOpen)
	}
	delete(o.byURI, uri)
	delete(o.docs, path)
	o.changedLocked()
	return nil
}

// Get returns the buffer of the file at the real path path.
func (o *Overlay) Get(path string) (Document, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d, ok := o.docs[path]
	if !ok {
		return Document{}, false
	}
	return d.snapshot(), true
}

// Documents returns a snapshot of every open buffer.
func (o *Overlay) Documents() []Document {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Document, 0, len(o.docs))
	for _, d := range o.docs {
		out = append(out, d.snapshot())
	}
	return out
}

// Changed returns a channel closed at the next change: a buffer opened,
// changed, closed or lost.
func (o *Overlay) Changed() <-chan struct{} {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.changed
}

// Len is how many buffers are open.
func (o *Overlay) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.docs)
}

func (d *doc) snapshot() Document {
	s := Document{URI: d.uri, Path: d.path, Version: d.version, Text: d.text, Lost: d.lost, TooLarge: d.tooLarge}
	if d.ahead != nil {
		s.Text, s.Ahead = *d.ahead, true
	}
	return s
}

// expect records that the buffer of path at version now holds text
// because of kin's own write, until the editor reports a change. Nothing
// happens when the editor already reported a newer version.
func (o *Overlay) expect(path string, version int64, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d := o.docs[path]; d != nil && d.version == version && d.lost == "" && !d.tooLarge {
		d.ahead = &text
	}
}

// settled waits until the buffer of path holds no edit of kin's that the
// editor has not reported yet, and returns it (ok false: it was closed).
func (o *Overlay) settled(ctx context.Context, path string) (Document, bool, error) {
	for {
		o.mu.Lock()
		d := o.docs[path]
		ch := o.changed
		if d == nil || d.ahead == nil {
			var s Document
			if d != nil {
				s = d.snapshot()
			}
			o.mu.Unlock()
			return s, d != nil, nil
		}
		o.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Document{}, false, ctx.Err()
		}
	}
}

func (o *Overlay) changedLocked() {
	close(o.changed)
	o.changed = make(chan struct{})
}
