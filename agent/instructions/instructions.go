// Package instructions finds and reads the project instructions kin gives
// the model: AGENTS.md (CLAUDE.md where a directory has none) of each
// workspace root and of the directories between a root and the files a
// session touches, and the person's own $KIN_HOME/AGENTS.md.
//
// It only reads: what the files say is for the model, framed by the agent
// as the project's instructions, and decides nothing about what may run.
// What it must never do (the trust boundary's rules, package boundary):
//
//   - Never read a project file through a symlink that leads out of the
//     workspace folders, nor one that leads to a secret (a repository's
//     AGENTS.md pointing at ~/.ssh/id_rsa, .env or .git/config would
//     otherwise send a key or a clone URL's token with every request), nor
//     anything but regular files; every read goes through the boundary's
//     resolver.
//   - Never let the files grow a request without bound: each is cut at
//     MaxBytes, and all of them together at MaxTotal, nearest first, with
//     what was left out listed (Set.Left).
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

	"github.com/kin-dev/kin/agent/boundary"
)

// MaxBytes is how much of one file is in force; the rest is left out with
// a marker.
const MaxBytes = 32 << 10

// MaxTotal is how much of all the files together is in force: the
// person's own file first, then the project's nearest to what the session
// works on (the deepest folders) first; a file that no longer fits is cut
// to what is left, or left out, and listed in Set.Left.
const MaxTotal = 64 << 10

// minShare is the least of a file kept when it is cut to fit MaxTotal; a
// smaller rest leaves the file out.
const minShare = 1 << 10

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
	real string
	size int64
	mod  time.Time
	file File
}

// NewLoader returns an empty Loader.
func NewLoader() *Loader { return &Loader{cache: map[string]cached{}} }

// Set is what Load found: the files in force, in the order the model reads
// them, and those left out to keep within MaxTotal.
type Set struct {
	Files []File
	// Left are the files left out, nearest last.
	Left []Left
}

// Left is a file left out of the instructions in force.
type Left struct {
	Path  string
	Bytes int64
}

// Load returns the files in force: home's first, then each root's followed
// by those of dirs below that root, shallower first (so the file nearest to
// what the model works on comes last). dirs outside every root are
// ignored; home may be "". Together they stay within MaxTotal: home's
// first, then the nearest ones; the farthest are cut or left out.
func (l *Loader) Load(home string, roots, dirs []string) Set {
	var out []File
	ws := newScope(home, roots)
	if home != "" {
		if f, ok := l.read(filepath.Join(home, Names[0]), ws, Home); ok {
			out = append(out, f)
		}
	}
	below := make([][]string, len(roots))
	for _, d := range dirs {
		for i, r := range roots {
			if d != r && boundary.Within(r, d) {
				below[i] = append(below[i], d)
				break
			}
		}
	}
	for i, r := range roots {
		if f, ok := l.find(r, ws, Root); ok {
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
			if f, ok := l.find(d, ws, Dir); ok {
				out = append(out, f)
			}
		}
	}
	return fit(out)
}

// fit keeps files within MaxTotal: home's first, then from the last (the
// nearest) back; what does not fit is cut to the room left (at least
// minShare) or left out.
func fit(all []File) Set {
	room := MaxTotal
	keep := make([]bool, len(all))
	order := make([]int, 0, len(all))
	for i := range all {
		if all[i].Scope == Home {
			order = append(order, i)
		}
	}
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Scope != Home {
			order = append(order, i)
		}
	}
	for _, i := range order {
		f := &all[i]
		switch {
		case len(f.Text) <= room:
			keep[i] = true
			room -= len(f.Text)
		case room >= minShare:
			*f = cutTo(*f, room)
			keep[i] = true
			room = 0
		}
	}
	var s Set
	for i, f := range all {
		if keep[i] {
			s.Files = append(s.Files, f)
		} else {
			s.Left = append(s.Left, Left{Path: f.Path, Bytes: f.Bytes})
		}
	}
	return s
}

// cutTo cuts a file's text in force to n bytes, marker included.
func cutTo(f File, n int) File {
	marker := fmt.Sprintf("\n[kin: the project's instructions files together are over %d KiB; the rest of this file is not in force]", MaxTotal>>10)
	keep := max(n-len(marker), 0)
	for keep > 0 && keep < len(f.Text) && f.Text[keep]&0xC0 == 0x80 {
		keep--
	}
	f.Text = f.Text[:keep] + marker
	f.Cut = true
	sum := sha256.Sum256([]byte(f.Text))
	f.Hash = hex.EncodeToString(sum[:8])
	return f
}

// scope is what a Load may read: the real roots, and the secrets around
// them.
type scope struct {
	roots   []string // real
	secrets *boundary.Secrets
}

func newScope(home string, roots []string) scope {
	s := scope{secrets: boundary.NewSecrets(home)}
	for _, r := range roots {
		s.roots = append(s.roots, boundary.RealPath(r))
	}
	return s
}

// allows says whether the real path of a file may be read: inside a root
// (a project's file; home's may be anywhere) and not a secret.
func (s scope) allows(real string, sc Scope) bool {
	if sc == Home {
		// the person's own file: wherever they keep it, but never a
		// credential (kin's home itself is where it lives)
		return s.secrets.Reason(real, "") == "" ||
			filepath.Base(real) == Names[0] && boundary.Within(s.secrets.KinHome(), real)
	}
	for _, r := range s.roots {
		if boundary.Within(r, real) {
			return s.secrets.ReasonIn(r, real) == "" // a session's worktree in kin's home counts as its root
		}
	}
	return false
}

// find reads the first of Names that dir holds.
func (l *Loader) find(dir string, ws scope, sc Scope) (File, bool) {
	for _, n := range Names {
		if f, ok := l.read(filepath.Join(dir, n), ws, sc); ok {
			return f, true
		}
	}
	return File{}, false
}

// read reads one file if it is a regular file the scope allows: a symlink
// is read only when what it points to is inside the roots and no secret
// (callers make sure no directory between a root and the file is a
// symlink).
func (l *Loader) read(path string, ws scope, sc Scope) (File, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return File{}, false
	}
	real := path
	if fi.Mode()&os.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return File{}, false
		}
		if fi, err = os.Stat(real); err != nil {
			return File{}, false
		}
	}
	if !fi.Mode().IsRegular() || !ws.allows(real, sc) {
		return File{}, false
	}
	l.mu.Lock()
	c, ok := l.cache[path]
	l.mu.Unlock()
	if ok && c.real == real && c.size == fi.Size() && c.mod.Equal(fi.ModTime()) {
		c.file.Scope = sc
		return c.file, true
	}
	f, err := readFile(path, real, fi.Size())
	if err != nil {
		return File{}, false
	}
	f.Scope = sc
	l.mu.Lock()
	l.cache[path] = cached{real: real, size: fi.Size(), mod: fi.ModTime(), file: f}
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

// readFile reads the file at path (real: where it leads) through the
// boundary's resolver, beneath its workspace folder: a symlink swapped in
// after the checks above still cannot lead the read out of it.
func readFile(path, real string, size int64) (File, error) {
	fh, err := boundary.Open(real)
	if err != nil {
		return File{}, err
	}
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return File{}, fmt.Errorf("%s is not a regular file", path)
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
		if !boundary.Within(r, path) || path == r {
			continue
		}
		dir := path
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			dir = filepath.Dir(path)
		}
		var out []string
		for d := dir; d != r && boundary.Within(r, d); d = filepath.Dir(d) {
			out = append(out, d)
		}
		return out
	}
	return nil
}
