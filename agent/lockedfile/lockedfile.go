// Package lockedfile performs read-modify-write cycles on small private
// files (kin's mcp.json, mcp_trust.json, grants.json, sign-ins) so that
// concurrent writers, in this process or in others, never corrupt the file
// or lose an edit. It is a leaf: agent and mcp both use it, and it must
// never import either.
//
// An exclusive lock on "<file>.lock" (beside the file) is held across the
// whole cycle: flock(2) on Unix, LockFileEx on Windows. The lock belongs to
// the open file, so it dies with the process that holds it; the new content goes to a temporary file in the same directory
// which is synced and renamed over the target, so readers that take no lock
// always see either the old or the new file, never a torn one. Files are
// written with mode 0600 and missing directories are created with mode 0700.
//
// The lock file is deliberately never deleted: removing it would let two
// writers lock different inodes.
package lockedfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileMode is the mode of every file written by Update.
const FileMode fs.FileMode = 0o600

// DirMode is the mode of directories created by Update.
const DirMode fs.FileMode = 0o700

// Update locks path, reads its current content and passes it to fn (exists
// is false when the file is absent). If fn returns an error, nothing is
// written and that error is returned. If fn returns nil content, nothing is
// written. Otherwise the content atomically replaces the file.
//
// A symbolic link at path is followed: the link's target is rewritten, so a
// config kept in a dotfiles repository stays linked.
func Update(path string, fn func(data []byte, exists bool) ([]byte, error)) error {
	path = resolve(path)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	unlock, err := lock(path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()

	data, err := os.ReadFile(path)
	exists := true
	if errors.Is(err, fs.ErrNotExist) {
		data, exists, err = nil, false, nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	out, err := fn(data, exists)
	if err != nil || out == nil {
		return err
	}
	return writeAtomic(path, out)
}

// resolve follows a symbolic link at path, if there is one.
func resolve(path string) string {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			return target
		}
	}
	return path
}

// lock takes an exclusive lock on the named lock file, creating it if
// needed. The returned func releases it.
func lock(name string) (unlock func(), err error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return func() {
		_ = unlockFile(f)
		f.Close()
	}, nil
}

// writeAtomic writes data to a temporary file beside path and renames it
// over path.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(FileMode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil { // persist the rename; best effort
		_ = d.Sync()
		d.Close()
	}
	return nil
}
