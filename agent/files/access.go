package files

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Access reads and writes files for one session. Paths are absolute, clean
// and real (symlinks resolved): the tools resolve and confine them first.
// Implementations must be safe for concurrent use; every method that may
// wait on something (the disk, an editor, a client) honours ctx.
type Access interface {
	// Open returns path's content as the person sees it: the editor's
	// buffer when the file is open there, else the file on disk. Errors
	// wrap fs.ErrNotExist, ErrIsDir, ErrNotRegular, ErrOutOfSync or say
	// what else went wrong; the caller closes the File.
	Open(ctx context.Context, path string) (*File, error)
	// Buffer returns the editor's buffer of path when the Access holds it
	// itself (an Overlay), without I/O and without waiting: search asks
	// it for every file it visits. ok is false when path is not open or
	// the Access has no buffers of its own (the file is then read from
	// disk).
	Buffer(path string) (text []byte, ok bool)
	// Plan says where a write to path would go now, or why it cannot be
	// done (ErrUnsaved, ErrOutOfSync), so that a change that would be
	// refused is refused before the person is asked to approve it. It
	// asks no one; Write decides again.
	Plan(ctx context.Context, path string) (Via, error)
	// Write replaces c.Path's content with c.New if it still is c.Old
	// (and exists as c.Existed says), else fails with ErrConflict. An
	// error wrapping ErrUnknown means the write may have happened: it
	// must not be retried.
	Write(ctx context.Context, c Change) (Written, error)
}

// Via says where content came from or where a write went.
type Via string

const (
	// ViaDisk is the file on disk.
	ViaDisk Via = "disk"
	// ViaEditor is the editor's (or an ACP client's) open buffer: what the
	// person sees, saved or not.
	ViaEditor Via = "editor"
)

// File is content to read, from an editor's buffer or from disk.
type File struct {
	io.ReadCloser
	// Size is the content's length in bytes.
	Size int64
	// From says where the content comes from.
	From Via
	// Unsaved is set when the content is an editor's buffer that differs
	// from the file on disk (as far as the Access can tell): commands see
	// the file, not this.
	Unsaved bool
}

// Change is one approved write.
type Change struct {
	// Path is the file to write: absolute, clean, real, already through
	// kin's path rules and approved.
	Path string
	// Old is the content the diff was shown against, and Existed whether
	// there was any (false for a new file).
	Old     []byte
	Existed bool
	// New is the content to write.
	New []byte
	// Title is what the person approved ("Edit main.go"); editors use it
	// as the label of the undo step.
	Title string
	// SessionID, TurnID and CallID say which call writes.
	SessionID, TurnID, CallID string
}

// Written says how a write was done.
type Written struct {
	Via Via
	// Saved is set when the new content is on disk (always for ViaDisk;
	// for ViaEditor when the editor saved the buffer).
	Saved bool
}

// Errors an Access reports, wrapped with details; test them with errors.Is.
var (
	ErrIsDir      = errors.New("is a directory")
	ErrNotRegular = errors.New("is not a regular file")
	ErrTooLarge   = errors.New("is too large")
	// ErrConflict: the file or buffer no longer holds what the diff was
	// shown against. Nothing was written.
	ErrConflict = errors.New("changed since the diff was shown")
	// ErrUnsaved: the editor's buffer has unsaved changes and the editor
	// cannot apply kin's edit to it. Nothing was written.
	ErrUnsaved = errors.New("has unsaved changes in the editor")
	// ErrOutOfSync: kin no longer knows what the editor's buffer holds
	// (a change it could not apply). Nothing was read or written.
	ErrOutOfSync = errors.New("kin lost track of the editor's buffer")
	// ErrRefused: the editor answered that it did not apply the edit.
	// Nothing was written.
	ErrRefused = errors.New("the editor did not apply the edit")
	// ErrUnknown: the edit was sent and no answer came (in time, before
	// the turn was cancelled, before the connection went away). It may
	// have been applied; it is never sent again.
	ErrUnknown = errors.New("the edit may have been applied")
)

// ReadAll reads a whole File of at most max bytes and closes it; a larger
// one is ErrTooLarge.
func ReadAll(f *File, max int64) ([]byte, error) {
	defer f.Close()
	if f.Size > max {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, f.Size, max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
	}
	return data, nil
}

// WithBeforeWrite returns a that calls before with each Change before it
// is written, and writes nothing when before fails. before sees c.Old, the
// content about to be replaced: this is where checkpoints (turn/undo) hook
// in, whatever the Access writes through.
func WithBeforeWrite(a Access, before func(ctx context.Context, c Change) error) Access {
	if before == nil {
		return a
	}
	return hooked{Access: a, before: before}
}

type hooked struct {
	Access
	before func(context.Context, Change) error
}

// Unwrap returns the Access h wraps (see Find).
func (h hooked) Unwrap() Access { return h.Access }

func (h hooked) Write(ctx context.Context, c Change) (Written, error) {
	if err := h.before(ctx, c); err != nil {
		return Written{}, fmt.Errorf("not written: %w", err)
	}
	return h.Access.Write(ctx, c)
}

// UnsavedLister is an Access that follows an editor's buffers and knows
// which of them hold changes not saved to disk: what a command, which
// reads the disk, does not see.
type UnsavedLister interface {
	// Unsaved lists the real paths of the open buffers whose text differs
	// from their file on disk (a buffer of a file not on disk counts),
	// sorted. It reads the disk; it asks no one.
	Unsaved() []string
}

// Watcher is an Access that hears of its buffers' changes as the editor
// reports them.
type Watcher interface {
	// Changed returns a channel that is closed at the next change the
	// editor reports: a buffer opened, changed or closed.
	Changed() <-chan struct{}
}

// Find returns what a is as a T: a itself, or the Access a wrapper (one
// with an Unwrap method, such as WithBeforeWrite's) holds, however deep.
// It is how optional abilities (UnsavedLister, Watcher, Remover) are found
// through the wrappers.
func Find[T any](a Access) (T, bool) {
	for a != nil {
		if t, ok := a.(T); ok {
			return t, true
		}
		w, ok := a.(interface{ Unwrap() Access })
		if !ok {
			break
		}
		a = w.Unwrap()
	}
	var zero T
	return zero, false
}

// Remover is an Access that can remove a file: what undoing a turn that
// created the file needs. Remove removes path only while it still holds
// old (else ErrConflict), and never a buffer with unsaved changes.
type Remover interface {
	Remove(ctx context.Context, path string, old []byte) error
}
