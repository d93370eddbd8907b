// Package instructions finds and reads the project instructions kin gives
// the model: AGENTS.md (CLAUDE.md where a directory has none) of each
// workspace root and of the directories between a root and the files a
// session touches, and the person's own $KIN_HOME/AGENTS.md.
//
// It only reads: what the files say is for the model, framed by the agent
// as the project's instructions, and decides nothing about what may run. It
// never reads through a symlink that leaves the folder the file belongs to
// (a repository's AGENTS.md pointing at ~/.ssh/id_rsa would otherwise send
// a key to the model), nor anything but regular files.
package instructions

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/files"
)

// MaxBytes is how much of one file is in force; the rest is left out with
// a marker.
const MaxBytes = 32 << 10

// Names are the file names looked for in a directory, in order: the first
// that exists is the directory's.
var Names = []string{"AGENTS.md", "CLAUDE.md"}

// Scope says where a file comes from.
type Scope string

const (
	Home Scope = "home" // $KIN_HOME/AGENTS.md: the person's own rules
	Root Scope = "root" // a workspace root's
	Dir  Scope = "dir"  // a directory below a root
)

// File is one instructions file in force.
type File struct {
	Path  string // absolute
	Scope Scope
	Bytes int64  // the file's size
	Text  string // what is in force: the file, cut to MaxBytes with a marker
	Cut   bool
	Hash  string // identifies Text
}

// Loader reads instructions files, keeping each file's content until its
// size or modification time changes, so looking again at every turn costs
// a stat per candidate.
type Loader struct {
	// mu guards cache.
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	size int64
	mod  time.Time
	file File
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader { return &Loader{cache: map[string]cached{}} }

// Load returns the files in force: home's first, then each root's followed
// by those of dirs below that root, shallower first (so the file nearest to
// what the model works on comes last). dirs outside every root are
// ignored; home may be "".
func (l *Loader) Load(home string, roots, dirs []string) []File {
	var out []File
	if home != "" {
		if f, ok := l.read(filepath.Join(home, Names[0]), home, Home); ok {
			out = append(out, f)
		}
	}
	below := make([][]string, len(roots))
	for _, d := range dirs {
		for i, r := range roots {
			if d != r && files.Within(r, d) {
				below[i] = append(below[i], d)
				break
			}
		}
	}
	for i, r := range roots {
		if f, ok := l.find(r, r, Root); ok {
			out = append(out, f)
		}
		ds := below[i]
		sort.Slice(ds, func(a, b int) bool {
			da, db := strings.Count(ds[a], string(filepath.Separator)), strings.Count(ds[b], string(filepath.Separator))
			if da != db {
				return da < db
			}
			return ds[a] < ds[b]
		})
		plain := plainDirs{root: r, seen: map[string]bool{}}
		for j, d := range ds {
			if j > 0 && d == ds[j-1] || !plain.ok(d) {
				continue
			}
			if f, ok := l.find(d, r, Dir); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// find reads the first of Names that dir holds.
func (l *Loader) find(dir, root string, scope Scope) (File, bool) {
	for _, n := range Names {
		if f, ok := l.read(filepath.Join(dir, n), root, scope); ok {
			return f, true
		}
	}
	return File{}, false
}

// read reads one file if it is a regular file inside folder. A file that
// is a symlink is read only when its target is inside folder too (callers
// make sure no directory between folder and the file is a symlink).
func (l *Loader) read(path, folder string, scope Scope) (File, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return File{}, false
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		rf, ferr := filepath.EvalSymlinks(folder)
		if err != nil || ferr != nil || !files.Within(rf, real) {
			return File{}, false
		}
		if fi, err = os.Stat(real); err != nil {
			return File{}, false
		}
	}
	if !fi.Mode().IsRegular() {
		return File{}, false
	}
	l.mu.Lock()
	c, ok := l.cache[path]
	l.mu.Unlock()
	if ok && c.size == fi.Size() && c.mod.Equal(fi.ModTime()) {
		c.file.Scope = scope
		return c.file, true
	}
	f, err := readFile(path, fi.Size())
	if err != nil {
		return File{}, false
	}
	f.Scope = scope
	l.mu.Lock()
	l.cache[path] = cached{size: fi.Size(), mod: fi.ModTime(), file: f}
	l.mu.Unlock()
	return f, true
}

// plainDirs answers, for directories below root, whether d and every
// directory between root and d is a directory and not a symlink (a symlink
// could lead out of the workspace). It remembers its answers for one Load.
type plainDirs struct {
	root string
	seen map[string]bool
}

func (p *plainDirs) ok(d string) bool {
	if d == p.root {
		return true
	}
	if v, ok := p.seen[d]; ok {
		return v
	}
	fi, err := os.Lstat(d)
	v := err == nil && fi.IsDir() && p.ok(filepath.Dir(d))
	p.seen[d] = v
	return v
}

func readFile(path string, size int64) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, MaxBytes+1))
	if err != nil {
		return File{}, err
	}
	f := File{Path: path, Bytes: size}
	if len(b) > MaxBytes {
		n := MaxBytes
		for n > 0 && b[n]&0xC0 == 0x80 { // not inside a character
			n--
		}
		b, f.Cut = b[:n], true
	}
	f.Text = strings.ToValidUTF8(string(b), "\uFFFD")
	if f.Cut {
		f.Text += fmt.Sprintf("\n[kin: this file is longer than %d KiB; the remaining %d bytes are not in force]", MaxBytes>>10, max(size-int64(len(b)), 0))
	}
	sum := sha256.Sum256([]byte(f.Text))
	f.Hash = hex.EncodeToString(sum[:8])
	return f, nil
}

// Dirs returns the directories whose instructions apply to path (absolute,
// or relative to the first root) below the root holding it: those strictly
// below the root down to path's directory, or path itself when it is a
// directory. A path outside every root has none.
func Dirs(roots []string, path string) []string {
	if len(roots) == 0 || path == "" {
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(roots[0], path)
	}
	path = filepath.Clean(path)
	for _, r := range roots {
		if !files.Within(r, path) || path == r {
			continue
		}
		dir := path
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			dir = filepath.Dir(path)
		}
		var out []string
		for d := dir; d != r && files.Within(r, d); d = filepath.Dir(d) {
			out = append(out, d)
		}
		return out
	}
	return nil
}
