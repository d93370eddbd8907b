package files

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// Editor is the editor at the other end of a connection, as Buffers needs
// it; the front end implements it on the wire.
type Editor interface {
	// ApplyEdit asks the editor to apply e to its open buffer, if the
	// buffer is still at e.Version. An answer (applied or not) comes back
	// as an EditResult; an error means no answer came (ctx ended, the
	// connection went away): the edit may have been applied.
	ApplyEdit(ctx context.Context, e Edit) (EditResult, error)
	// FilesChanged tells the editor that kin wrote these files on disk, so
	// that it reloads the buffers that have no unsaved changes. It must
	// not block.
	FilesChanged(changes []FileChange)
}

// Edit is one change kin asks the editor to make to an open buffer.
type Edit struct {
	URI     string
	Path    string
	Version int64 // the buffer's version the edits apply to
	Edits   []TextEdit
	Label   string // the undo step's name: what the person approved
	// SessionID and CallID say which call edits.
	SessionID, CallID string
}

// EditResult is the editor's answer.
type EditResult struct {
	Applied bool
	Reason  string // why not, when not applied
	Saved   bool   // the editor saved the buffer after applying
}

// FileChange is a file kin wrote (or removed) on disk.
type FileChange struct {
	Path    string
	Created bool
	Deleted bool
}

// DefaultEditTimeout is how long Buffers waits for the editor to answer an
// edit (or to report kin's last one) by default.
const DefaultEditTimeout = 30 * time.Second

// Buffers is the Access of an editor that keeps an Overlay up to date:
// reads see its open buffers, writes to an open buffer go through the
// editor when it applies edits (ApplyEdits), every other write goes to
// disk and is then announced with FilesChanged. A buffer with unsaved
// changes is never written around.
type Buffers struct {
	Overlay *Overlay
	Editor  Editor
	// ApplyEdits says the editor applies edits to its buffers.
	ApplyEdits bool
	// Timeout bounds the wait for the editor's answer; 0 is
	// DefaultEditTimeout.
	Timeout time.Duration
}

// Open implements Access.
func (b *Buffers) Open(ctx context.Context, path string) (*File, error) {
	d, ok := b.Overlay.Get(path)
	if !ok || d.TooLarge {
		return Disk{}.Open(ctx, path)
	}
	if d.Lost != "" {
		return nil, lostError(d)
	}
	unsaved := b.differsFromDisk(d.Text, path)
	return &File{ReadCloser: io.NopCloser(strings.NewReader(d.Text)), Size: int64(len(d.Text)), From: ViaEditor, Unsaved: unsaved}, nil
}

// Buffer implements Access.
func (b *Buffers) Buffer(path string) ([]byte, bool) {
	d, ok := b.Overlay.Get(path)
	if !ok || d.TooLarge || d.Lost != "" {
		return nil, false
	}
	return []byte(d.Text), true
}

// Plan implements Access.
func (b *Buffers) Plan(ctx context.Context, path string) (Via, error) {
	d, ok := b.Overlay.Get(path)
	switch {
	case !ok:
		return ViaDisk, nil
	case d.Lost != "":
		return "", lostError(d)
	case d.TooLarge:
		return "", fmt.Errorf("%w: the editor's buffer is over %d MiB, more than kin follows", ErrTooLarge, MaxDocument>>20)
	case b.ApplyEdits:
		return ViaEditor, nil
	case b.differsFromDisk(d.Text, path):
		return "", unsavedError()
	}
	return ViaDisk, nil
}

// Write implements Access.
func (b *Buffers) Write(ctx context.Context, c Change) (Written, error) {
	if _, ok := b.Overlay.Get(c.Path); !ok {
		return b.toDisk(ctx, c, nil)
	}
	via, err := b.Plan(ctx, c.Path)
	if err != nil {
		return Written{}, err
	}
	if via == ViaEditor {
		return b.throughEditor(ctx, c)
	}
	d, ok := b.Overlay.Get(c.Path)
	if !ok {
		return b.toDisk(ctx, c, nil) // closed meanwhile
	}
	if !c.Existed || d.Text != string(c.Old) {
		return Written{}, ErrConflict
	}
	return b.toDisk(ctx, c, &d)
}

// toDisk writes c on disk and tells the editor. d is the clean buffer of
// the file, if open: it holds the new text once the editor reloads it.
func (b *Buffers) toDisk(ctx context.Context, c Change, d *Document) (Written, error) {
	w, err := Disk{}.Write(ctx, c)
	if err != nil {
		return w, err
	}
	if d != nil {
		b.Overlay.expect(c.Path, d.Version, string(c.New))
	}
	b.Editor.FilesChanged([]FileChange{{Path: c.Path, Created: !c.Existed}})
	return w, nil
}

// throughEditor asks the editor to change its buffer; the edit is sent at
// most once.
func (b *Buffers) throughEditor(ctx context.Context, c Change) (Written, error) {
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = DefaultEditTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A versioned edit needs the version the editor gave its buffer after
	// kin's last edit: wait for its report. Nothing was sent yet.
	d, ok, err := b.Overlay.settled(wctx, c.Path)
	switch {
	case err != nil && ctx.Err() != nil:
		return Written{}, fmt.Errorf("cancelled before the edit was sent: %w", ctx.Err())
	case err != nil:
		return Written{}, fmt.Errorf("%w: the editor did not report kin's previous edit of this file within %s; nothing was sent", ErrRefused, timeout)
	case !ok:
		return b.toDisk(ctx, c, nil) // closed meanwhile: the disk is what the person sees
	case d.Lost != "":
		return Written{}, lostError(d)
	case !c.Existed || d.Text != string(c.Old):
		return Written{}, ErrConflict
	}
	e := Edit{URI: d.URI, Path: c.Path, Version: d.Version, Edits: []TextEdit{lineEdit(d.Text, string(c.New))},
		Label: c.Title, SessionID: c.SessionID, CallID: c.CallID}
	res, err := b.Editor.ApplyEdit(wctx, e)
	switch {
	case err != nil && ctx.Err() != nil:
		return Written{}, fmt.Errorf("%w: the turn was cancelled while the editor was applying it; it is not sent again", ErrUnknown)
	case err != nil && wctx.Err() != nil:
		return Written{}, fmt.Errorf("%w: the editor did not answer within %s; it is not sent again", ErrUnknown, timeout)
	case err != nil:
		return Written{}, fmt.Errorf("%w: no answer from the editor (%v); it is not sent again", ErrUnknown, err)
	case !res.Applied:
		reason := res.Reason
		if reason == "" {
			reason = "no reason given"
		}
		return Written{}, fmt.Errorf("%w (%s)", ErrRefused, reason)
	}
	b.Overlay.expect(c.Path, d.Version, string(c.New))
	return Written{Via: ViaEditor, Saved: res.Saved}, nil
}

// Remove implements Remover: a file open in the editor goes only while its
// buffer is what kin expects there; the editor is told, like for a write.
func (b *Buffers) Remove(ctx context.Context, path string, old []byte) error {
	if d, ok := b.Overlay.Get(path); ok {
		switch {
		case d.Lost != "":
			return lostError(d)
		case d.Text != string(old):
			return ErrConflict
		}
	}
	if err := (Disk{}).Remove(ctx, path, old); err != nil {
		return err
	}
	b.Editor.FilesChanged([]FileChange{{Path: path, Deleted: true}})
	return nil
}

// Unsaved implements UnsavedLister. A buffer kin lost track of, or one
// too large to follow, is not listed: kin does not know what it holds.
func (b *Buffers) Unsaved() []string {
	var out []string
	for _, d := range b.Overlay.Documents() {
		if d.Lost == "" && !d.TooLarge && b.differsFromDisk(d.Text, d.Path) {
			out = append(out, d.Path)
		}
	}
	sort.Strings(out)
	return out
}

// Changed implements Watcher.
func (b *Buffers) Changed() <-chan struct{} { return b.Overlay.Changed() }

// differsFromDisk reports whether text is not what the file on disk holds
// (a missing or unreadable file counts as different).
func (b *Buffers) differsFromDisk(text, path string) bool {
	// A file larger than text differs without being read (ErrTooLarge).
	data, err := boundary.ReadFileUpTo(path, int64(len(text)))
	return err != nil || string(data) != text
}

func lostError(d Document) error {
	return fmt.Errorf("%w (%s); close the file in the editor and open it again", ErrOutOfSync, d.Lost)
}

func unsavedError() error {
	return fmt.Errorf("%w, and this editor does not let kin edit its buffers: save or close the file, then ask again", ErrUnsaved)
}
