package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"

	"github.com/kin-dev/kin/agent/boundary"
)

// Disk reads and writes the files on disk: the Access of a front end with
// no editor buffers (kin chat, tests), and what Buffers falls back to.
// Every operation goes through the trust boundary's resolver
// (boundary.Open, WriteFile, Remove): beneath the workspace folder holding
// the path (one os.Root per folder), or beneath the path's own folder when
// it is outside every workspace folder (an approved write there), so a
// symlink swapped in after the path was checked and approved cannot carry
// a read or a write anywhere else.
type Disk struct{}

// Open opens a regular file. It stats before opening so that a FIFO or a
// device is refused instead of blocking the read.
func (Disk) Open(ctx context.Context, path string) (*File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := boundary.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	f, err := boundary.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err = f.Stat()
	if err == nil {
		err = regular(fi) // swapped between the two stats
	}
	if err != nil {
		f.Close()
		return nil, unwrapPathError(err)
	}
	return &File{ReadCloser: f, Size: fi.Size(), From: ViaDisk}, nil
}

func regular(fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return ErrIsDir
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	return nil
}

// Buffer implements Access: the disk has no buffers.
func (Disk) Buffer(string) ([]byte, bool) { return nil, false }

// Plan implements Access: every write goes to disk.
func (Disk) Plan(context.Context, string) (Via, error) { return ViaDisk, nil }

// writeLocks serialise kin's own compare-and-replace of a file (Write,
// Remove), by the file's path: two calls running side by side (delegated
// subagents, in the same workspace) that both found the content they
// expected would each replace it, one change lost and both reported done.
// Striped, so that kin holds no lock per file it ever wrote. LockPath is
// exported for the Accesses that write through someone else (an ACP
// client's fs/write_text_file): their compare-and-replace is kin's too.
// Each is a channel of one slot, not a mutex, so that a write waiting
// behind another (an ACP client's, which may take its client's 30 seconds)
// ends with its call's context.
var writeLocks = func() (l [64]chan struct{}) {
	for i := range l {
		l[i] = make(chan struct{}, 1)
	}
	return l
}()

// LockPath holds the write lock of path p until the returned func is
// called, or fails when ctx ends first. It is not reentrant: never call
// Disk.Write or Disk.Remove of the same path while holding it.
func LockPath(ctx context.Context, p string) (unlock func(), err error) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(p))
	slot := writeLocks[h.Sum32()%uint32(len(writeLocks))]
	select {
	case slot <- struct{}{}:
		return func() { <-slot }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("cancelled while another write of the file went on: %w", ctx.Err())
	}
}

// Write replaces the file atomically if it still holds c.Old.
func (Disk) Write(ctx context.Context, c Change) (Written, error) {
	if err := ctx.Err(); err != nil {
		return Written{}, fmt.Errorf("cancelled before writing: %w", err)
	}
	unlock, err := LockPath(ctx, c.Path)
	if err != nil {
		return Written{}, err
	}
	defer unlock()
	// The resolver keeps the write inside the folder, following a symlink
	// that stays inside: a folder along the approved path swapped since for
	// one (to .git, say) would carry it to a file that makes things run
	// later. The path must still be the real one the person approved.
	if err := boundary.StillReal(c.Path); err != nil {
		return Written{}, err
	}
	cur, err := boundary.ReadFile(c.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Written{}, err
	}
	if exists != c.Existed || !bytes.Equal(cur, c.Old) {
		return Written{}, ErrConflict
	}
	if err := boundary.WriteFile(c.Path, c.New, 0o644); err != nil {
		return Written{}, err
	}
	return Written{Via: ViaDisk, Saved: true}, nil
}

// unwrapPathError drops the path from an *os.PathError: callers name the
// path the way the person and the model gave it.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Remove implements Remover: the file goes if it still holds old.
func (Disk) Remove(ctx context.Context, path string, old []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cancelled before removing: %w", err)
	}
	unlock, err := LockPath(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	fi, err := boundary.Lstat(path)
	if err != nil {
		return err
	}
	if err := regular(fi); err != nil {
		return err
	}
	cur, err := boundary.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, old) {
		return ErrConflict
	}
	return boundary.Remove(path)
}
