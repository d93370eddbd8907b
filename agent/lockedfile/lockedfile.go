// Package lockedfile is kin's one way to lock a file and its one way to
// replace a file's content: the locked read-modify-write cycles on small
// private files (kin's mcp.json, trust.json, grants.json, sign-ins),
// the session logs' and index's locks, and every "write a temporary file,
// then rename it over the target" in kin (the workspace files kin's tools
// write, checkpoints, the session index, kin chat's history). It is a
// leaf: agent and mcp both use it, and it must never import either.
//
// Locks are flock(2) on Unix and one far-off byte of LockFileEx on Windows
// (TryLock, LockShared, LockExclusive, Unlock). A lock belongs to the open
// file, so it dies with the process that holds it. Update holds an
// exclusive lock on "<file>.lock" (beside the file) across the whole
// cycle; the lock file is deliberately never deleted: removing it would
// let two writers lock different inodes.
//
// Replace writes the new content to a temporary file in the same folder,
// opened beneath an os.Root (so neither the temporary file nor the rename
// can be carried out of that folder by a symlink), then renames it over
// the target: readers that take no lock always see the old or the new
// file, never a torn one. Files Update writes are 0600 and the folders it
// makes 0700.
//
// What this package must never do: follow a symlink out of the folder it
// was given when it replaces a file, or leave a temporary file behind when
// a write fails.
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

// ErrLocked is TryLock's answer when someone else holds the lock.
var ErrLocked = errors.New("locked")

// Update locks path, reads its current content and passes it to fn (exists
// is false when the file is absent). If fn returns an error, nothing is
// written and that error is returned. If fn returns nil content, nothing is
// written. Otherwise the content atomically replaces the file.
//
// A symbolic link at path is followed: the link's target is rewritten, so a
// config kept in a dotfiles repository stays linked.
func Update(path string, fn func(data []byte, exists bool) ([]byte, error)) error {
	return UpdateWith(path, Options{Perm: FileMode, Sync: true, SyncDir: true}, fn)
}

// UpdateWith is Update writing with o: a file whose last change may be lost
// to a power cut (never half written: the replace is atomic) can leave out
// the syncs, which cost milliseconds on a disk.
func UpdateWith(path string, o Options, fn func(data []byte, exists bool) ([]byte, error)) error {
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
	if err := ReplaceFile(path, out, o); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
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
// needed. The returned func releases it. The lock is opened beneath its
// folder (os.Root), as Replace writes: a symlink at its name that leads out
// of the folder (a repository's .kin/mcp.json.lock -> ~/anywhere) is
// refused, where O_CREATE through it created a file at its target.
func lock(name string) (unlock func(), err error) {
	root, err := os.OpenRoot(filepath.Dir(name))
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	defer root.Close()
	f, err := root.OpenFile(filepath.Base(name), os.O_RDWR|os.O_CREATE, FileMode)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", name, err)
	}
	if err := LockExclusive(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return func() {
		_ = Unlock(f)
		f.Close()
	}, nil
}
