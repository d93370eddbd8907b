package rpctest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Crashed returns a copy of home, taken while the kin serving it still
// runs: what a kin that stopped at that moment would have left. A file
// that goes while the copy is taken (a temporary file lockedfile.Replace
// renames over the session index, say) is left out, as a crash at that
// moment could leave it out; os.CopyFS failed the test on it, which a
// loaded machine made likely enough to turn CI red.
func Crashed(t testing.TB, home string) string {
	t.Helper()
	to := t.TempDir()
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since its folder was listed
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(home, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		case !d.Type().IsRegular():
			return nil // kin keeps no other kind of file in its home
		}
		return copyFile(p, dst)
	})
	if err != nil {
		t.Fatalf("copying the crashed kin's home: %v", err)
	}
	return to
}

func copyFile(from, to string) error {
	r, err := os.Open(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone since its folder was listed
	}
	if err != nil {
		return err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return err
	}
	w, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm()|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
