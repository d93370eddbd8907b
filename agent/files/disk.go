package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Disk reads and writes the files on disk: the Access of a front end with
// no editor buffers (kin chat, tests), and what Buffers falls back to.
type Disk struct{}

// Open opens a regular file. It stats before opening so that a FIFO or a
// device is refused instead of blocking the read.
func (Disk) Open(ctx context.Context, path string) (*File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
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

// Write replaces the file atomically if it still holds c.Old.
func (Disk) Write(ctx context.Context, c Change) (Written, error) {
	if err := ctx.Err(); err != nil {
		return Written{}, fmt.Errorf("cancelled before writing: %w", err)
	}
	cur, err := os.ReadFile(c.Path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Written{}, unwrapPathError(err)
	}
	if exists != c.Existed || !bytes.Equal(cur, c.Old) {
		return Written{}, ErrConflict
	}
	if err := writeAtomic(c.Path, c.New); err != nil {
		return Written{}, err
	}
	return Written{Via: ViaDisk, Saved: true}, nil
}

// readDisk reads a file of at most max bytes; large reports a bigger one
// without reading it.
func readDisk(path string, max int64) (data []byte, exists, large bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, false, nil
	}
	if err != nil {
		return nil, false, false, unwrapPathError(err)
	}
	if fi.Size() > max {
		return nil, true, true, nil
	}
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, false, nil
	}
	return data, err == nil, false, unwrapPathError(err)
}

// writeAtomic replaces p with data: a temporary file in the same directory,
// synced, then renamed over p. p keeps its permission bits; a new file gets
// 0644 (and missing parent directories 0755).
func writeAtomic(p string, data []byte) error {
	dir := filepath.Dir(p)
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm() | fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return unwrapPathError(err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".kin-*")
	if err != nil {
		return unwrapPathError(err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Chmod(mode); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Sync(); err != nil {
		return unwrapPathError(err)
	}
	if err := f.Close(); err != nil {
		return unwrapPathError(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return unwrapPathError(err)
	}
	ok = true
	return nil
}

// RealPath resolves the symlinks along the longest existing prefix of the
// clean absolute path p and appends the rest unchanged: the key under
// which the tools and the Overlay name a file.
func RealPath(p string) string {
	rest := ""
	dir := p
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		if rest == "" {
			rest = filepath.Base(dir)
		} else {
			rest = filepath.Join(filepath.Base(dir), rest)
		}
		dir = parent
	}
}

// Within reports whether p is root or below it (both clean and absolute):
// the test the tools confine paths with, and instructions its files.
func Within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
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
	fi, err := os.Lstat(path)
	if err != nil {
		return unwrapPathError(err)
	}
	if err := regular(fi); err != nil {
		return err
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		return unwrapPathError(err)
	}
	if !bytes.Equal(cur, old) {
		return ErrConflict
	}
	return unwrapPathError(os.Remove(path))
}
