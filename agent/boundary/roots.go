package boundary

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// Errors the resolver reports; test them with errors.Is.
var (
	// ErrOutside: the path, or a symlink along it, leads out of the folder
	// it is resolved beneath (a workspace folder, or the folder an
	// approved path outside the workspace is in).
	ErrOutside = errors.New("leads outside the folder it belongs to")
	// ErrChanged: the path no longer resolves to what kin saw (a folder
	// along it was replaced by a symlink since).
	ErrChanged = errors.New("no longer resolves to the file kin changed")
	// ErrNotRegular: the path names a FIFO, a socket or a device (or a
	// folder, where a file's content was asked for): kin reads none.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge: the file holds more than the reader's limit.
	ErrTooLarge = errors.New("is too large")
)

// openRoot is one folder opened as an os.Root: every read, write, remove
// and stat of a path below it goes through it, so a symlink (swapped in at
// any time) is followed only while it stays inside.
type openRoot struct {
	real string // the folder, symlinks resolved
	root *os.Root
}

// registry holds the roots of every session of the process, by real path:
// one os.Root per folder, opened once (and again only when the folder at
// that path is another one than the open root).
var registry = struct {
	sync.Mutex
	roots map[string]*openRoot
	// sorted are the roots deepest first, for lookups.
	sorted []*openRoot
}{roots: map[string]*openRoot{}}

// register opens (or reuses) the root of the real folder path.
func register(real string) (*openRoot, error) {
	registry.Lock()
	defer registry.Unlock()
	if r := registry.roots[real]; r != nil {
		fi, err := os.Stat(real)
		rfi, rerr := r.root.Stat(".")
		if err == nil && rerr == nil && os.SameFile(fi, rfi) {
			return r, nil
		}
		// Another folder at that path now (deleted and made again): the
		// old Root is left to its finalizer, since a call may still use it.
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	r := &openRoot{real: real, root: root}
	registry.roots[real] = r
	registry.sorted = registry.sorted[:0]
	for _, x := range registry.roots {
		registry.sorted = append(registry.sorted, x)
	}
	sort.Slice(registry.sorted, func(i, j int) bool { return len(registry.sorted[i].real) > len(registry.sorted[j].real) })
	return r, nil
}

// beneath returns the Root a real absolute path is resolved beneath and the
// path relative to it: the deepest registered workspace folder holding it,
// else the nearest existing folder above the path (an approved write
// outside the workspace, kin's own files). done releases a Root opened for
// the call.
func beneath(p string) (root *os.Root, rel string, done func(), err error) {
	if !filepath.IsAbs(p) {
		return nil, "", nil, fmt.Errorf("%s is not an absolute path", p)
	}
	p = filepath.Clean(p)
	registry.Lock()
	for _, r := range registry.sorted {
		if Within(r.real, p) {
			registry.Unlock()
			rel, err := filepath.Rel(r.real, p)
			if err != nil {
				return nil, "", nil, err
			}
			return r.root, rel, func() {}, nil
		}
	}
	registry.Unlock()
	// the nearest existing folder above p (a write may make the rest)
	dir := filepath.Dir(p)
	for {
		if dir == p {
			return nil, "", nil, fmt.Errorf("%s is the file system's root", p)
		}
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, "", nil, fmt.Errorf("no folder of %s exists", p)
		}
		dir = parent
	}
	root, err = os.OpenRoot(dir)
	if err != nil {
		return nil, "", nil, unwrap(err)
	}
	rel, err = filepath.Rel(dir, p)
	if err != nil {
		root.Close()
		return nil, "", nil, err
	}
	return root, rel, func() { root.Close() }, nil
}

// at runs op on p's path beneath its folder (see beneath).
func at[T any](p string, op func(root *os.Root, rel string) (T, error)) (T, error) {
	root, rel, done, err := beneath(p)
	if err != nil {
		var zero T
		return zero, err
	}
	defer done()
	v, err := op(root, rel)
	return v, unwrap(err)
}

// Open opens the file (or folder) at the real absolute path p for reading,
// beneath its folder (see the package doc): a symlink along p is followed
// only while it stays inside; otherwise the error wraps ErrOutside. Anything
// that is neither a regular file nor a folder (a FIFO, a socket, a device:
// what a command may leave in the workspace) is refused with ErrNotRegular,
// without waiting: a FIFO's open would block until something writes to it,
// and its read after that, beyond any cancel.
func Open(p string) (*os.File, error) { return at(p, openRegular) }

// openRegular opens rel beneath root without blocking and keeps it only if
// it is a regular file or a folder (decided on the open file, so a swap
// between a check and the open changes nothing).
func openRegular(root *os.Root, rel string) (*os.File, error) {
	f, _, err := openRegularInfo(root, rel)
	return f, err
}

// openRegularInfo is openRegular that also returns the open file's info,
// for a reader that needs its size (ReadFileUpTo): not asked for twice.
func openRegularInfo(root *os.Root, rel string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		err = fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// OpenIn is Open of rel beneath root, for a reader that holds a root of its
// own (a skill's folder): a FIFO is refused, never waited on.
func OpenIn(root *os.Root, rel string) (*os.File, error) { return openRegular(root, rel) }

// Stat is os.Stat beneath p's folder.
func Stat(p string) (fs.FileInfo, error) { return at(p, (*os.Root).Stat) }

// Lstat is os.Lstat beneath p's folder.
func Lstat(p string) (fs.FileInfo, error) { return at(p, (*os.Root).Lstat) }

// ReadFile reads the regular file at p beneath its folder (see Open).
func ReadFile(p string) ([]byte, error) { return ReadFileUpTo(p, -1) }

// ReadFileUpTo is ReadFile of a file of at most max bytes (max < 0: no
// limit); a larger one is ErrTooLarge, and nothing of it is read. What a
// command may have left (a sparse file of a terabyte costs it no disk) is
// read with a limit, or kin would try to hold it all in memory.
func ReadFileUpTo(p string, max int64) ([]byte, error) {
	return at(p, func(root *os.Root, rel string) ([]byte, error) {
		f, fi, err := openRegularInfo(root, rel)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readUpTo(f, fi, max)
	})
}

// readUpTo reads the open regular file f, of info fi (its opener's Stat),
// whole, if it holds at most max bytes (max < 0: no limit).
func readUpTo(f *os.File, fi fs.FileInfo, max int64) ([]byte, error) {
	if fi.IsDir() {
		return nil, fmt.Errorf("%w (a folder)", ErrNotRegular)
	}
	if max >= 0 && fi.Size() > max {
		return nil, fmt.Errorf("%w: %d bytes, over %d", ErrTooLarge, fi.Size(), max)
	}
	r := io.Reader(f)
	if max >= 0 {
		r = io.LimitReader(f, max+1) // one byte more tells a file that grew
	}
	b, err := io.ReadAll(r)
	if err == nil && max >= 0 && int64(len(b)) > max {
		err = fmt.Errorf("%w: over %d bytes", ErrTooLarge, max)
	}
	return b, err
}

// ReadDir lists the folder at p beneath its folder.
func ReadDir(p string) ([]fs.DirEntry, error) {
	f, err := Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, unwrap(err)
}

// WriteFile replaces the file at p with data beneath its folder
// (lockedfile.Replace: a temporary file renamed over it, durably): a
// symlink along p is followed only while it stays inside, a symlink at p
// itself is replaced, never followed. The file keeps its permission bits;
// a new one gets perm, and missing parent folders are made.
func WriteFile(p string, data []byte, perm fs.FileMode) error {
	root, rel, done, err := beneath(p)
	if err != nil {
		return err
	}
	defer done()
	// The file's folder, resolved once beneath the root (made when
	// missing); the temporary file, the mode and the rename then touch one
	// name in it.
	dir, name := filepath.Split(rel)
	if dir == "" {
		return outside(lockedfile.Replace(root, name, data, lockedfile.Options{Perm: perm, KeepMode: true, Sync: true}))
	}
	sub, err := root.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = root.MkdirAll(dir, 0o755); err == nil {
			sub, err = root.OpenRoot(dir)
		}
	}
	if err != nil {
		return unwrap(err)
	}
	defer sub.Close()
	return outside(lockedfile.Replace(sub, name, data, lockedfile.Options{Perm: perm, KeepMode: true, Sync: true}))
}

// Remove removes the file (or empty folder) at p beneath its folder; a
// symlink at p is removed itself, never followed.
func Remove(p string) error {
	_, err := at(p, func(root *os.Root, rel string) (struct{}, error) { return struct{}{}, root.Remove(rel) })
	return err
}

// Unchanged reports (ErrChanged) when the real absolute path p no longer
// names what it named when kin resolved it: some folder along it is now a
// symlink (or gone), or p itself is a symlink. What undo asks before it
// puts a file back; the write itself then goes through the Root, so even a
// swap right after this check cannot carry it outside the folder.
func Unchanged(p string) error {
	dir := filepath.Dir(p)
	if real, err := filepath.EvalSymlinks(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: the folder %s is gone", ErrChanged, dir)
		}
		return fmt.Errorf("%w: %v", ErrChanged, unwrap(err))
	} else if real != dir {
		return fmt.Errorf("%w: %s now leads to %s through a symlink", ErrChanged, dir, real)
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is now a symlink", ErrChanged, p)
	}
	return nil
}

// StillReal reports (ErrChanged) when the real absolute path p of a file
// about to be written is no longer real: p itself is a symlink (a dangling
// one included), or a folder along it now leads elsewhere through one.
// Folders still missing are fine: the write makes them. What is asked
// before a write is handed to someone who follows symlinks wherever they
// stay (an ACP client's fs/write_text_file): WriteFile replaces a symlink
// at p and the tools resolved p before the person approved it, so a
// symlink swapped in since would carry the write to another file of the
// workspace (one that makes things run later, which must always ask).
// Only the moment between this check and the other's write stays open.
func StillReal(p string) error {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is now a symlink", ErrChanged, p)
	}
	dir := filepath.Dir(p)
	for {
		fi, err := os.Lstat(dir)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s is now a symlink", ErrChanged, dir)
		case err == nil:
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrChanged, unwrap(err))
			}
			if real != dir {
				return fmt.Errorf("%w: %s now leads to %s through a symlink", ErrChanged, dir, real)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w: %v", ErrChanged, unwrap(err))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// RealPath resolves the symlinks along the longest existing prefix of the
// clean absolute path p and appends the rest unchanged: the key under
// which the tools and the editor's buffers name a file.
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

// Within reports whether p is root or below it (both clean and absolute).
func Within(root, p string) bool {
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

// unwrap drops the path from an *os.PathError (callers name the path the
// way the person and the model gave it) and names an escape ErrOutside.
func unwrap(err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return outside(err)
}

// outside turns os.Root's "path escapes from parent" into ErrOutside.
func outside(err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w (a symlink along it points out)", ErrOutside)
	}
	return err
}
