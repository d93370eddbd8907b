package lockedfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Options say how Replace writes.
type Options struct {
	// Perm is the new file's permission bits (0 is 0600).
	Perm fs.FileMode
	// KeepMode keeps the permission bits (and setuid, setgid, sticky) of
	// the file being replaced; Perm is for a new file only.
	KeepMode bool
	// MkdirAll makes missing parent folders (0755; 0700 when Perm has no
	// group or other bits).
	MkdirAll bool
	// Sync makes the content durable before the rename; SyncDir the
	// rename itself (best effort: Windows cannot sync a folder).
	Sync, SyncDir bool
}

// ReplaceFile replaces the file at path (absolute or relative to the
// working directory) with data, beneath path's own folder: a symlink in
// path's last element is replaced, never followed.
func ReplaceFile(p string, data []byte, o Options) error {
	dir := filepath.Dir(p)
	if o.MkdirAll {
		if err := os.MkdirAll(dir, dirPerm(o.Perm)); err != nil {
			return unwrap(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return unwrap(err)
	}
	defer root.Close()
	return Replace(root, filepath.Base(p), data, Options{Perm: o.Perm, KeepMode: o.KeepMode, Sync: o.Sync, SyncDir: o.SyncDir})
}

// Replace replaces the file name (slash-separated, relative to root) with
// data: a temporary file beside it, written (and synced when asked), then
// renamed over it. Everything happens beneath root, so a symlink along name
// can take the write nowhere outside it; a symlink at name itself is
// replaced, not followed. Nothing is left behind when it fails.
func Replace(root *os.Root, name string, data []byte, o Options) (err error) {
	name = path.Clean(filepath.ToSlash(name))
	dir, base := path.Split(name)
	if dir == "" {
		dir = "."
	}
	perm := o.Perm
	if perm == 0 {
		perm = FileMode
	}
	// A new file is created with perm, less the process's umask, as any
	// program's new file is (a person whose umask is 077 does not get
	// world-readable files); a kept mode is the replaced file's, exactly.
	create, keep, kept := perm, fs.FileMode(0), false
	if o.KeepMode {
		if fi, serr := root.Lstat(name); serr == nil && fi.Mode().IsRegular() {
			// made private, then given the kept mode (Chmod, which the
			// umask does not touch) once written
			create, keep, kept = 0o600, fi.Mode().Perm()|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), true
		}
	}
	if o.MkdirAll && dir != "." {
		if err := root.MkdirAll(dir, dirPerm(perm)); err != nil {
			return unwrap(err)
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, "."+base+".kin-"+hex.EncodeToString(rnd[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, create)
	if err != nil {
		return unwrap(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return unwrap(err)
	}
	if kept && keep != create {
		if err = f.Chmod(keep); err != nil {
			return unwrap(err)
		}
	}
	if o.Sync {
		if err = f.Sync(); err != nil {
			return unwrap(err)
		}
	}
	if err = f.Close(); err != nil {
		return unwrap(err)
	}
	if err = root.Rename(tmp, name); err != nil {
		return unwrap(err)
	}
	if o.SyncDir {
		if d, derr := root.Open(dir); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return nil
}

func dirPerm(perm fs.FileMode) fs.FileMode {
	if perm == 0 || perm&0o077 == 0 {
		return 0o700
	}
	return 0o755
}

// unwrap drops the path from an *os.PathError: callers name the path the
// way the person gave it.
func unwrap(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
