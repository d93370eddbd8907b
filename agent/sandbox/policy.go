package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
)

// Policy is what one command may do. Everything not writable is read-only;
// hidden paths cannot be read either. Where entries nest, the innermost
// decides: a read-only .git/hooks inside a writable workspace stays
// read-only, a writable cache inside a hidden $KIN_HOME stays writable.
type Policy struct {
	// Writable are folders the command may change.
	Writable []string
	// ReadOnly are paths (inside Writable) the command may read but not
	// change: the .git internals that run code, kin's project config.
	ReadOnly []string
	// Missing are paths (inside Writable) that do not exist and that the
	// command must not create: each gets a read-only placeholder while
	// the command runs (bubblewrap: the null device, removed after it
	// ended unless another command still holds it; Seatbelt: a rule).
	Missing []string
	// Seeded are paths (inside Writable) that do not exist and that the
	// command must not create, but where a placeholder would change what
	// git does: Command writes each with the content given (a valid
	// value), read-only to the command, and removes it once no command
	// holds it.
	Seeded map[string]string
	// Hidden are paths the command may neither read nor change.
	Hidden []string
	// Cache is the tool-cache folder (see Config.Cache), writable; "" for
	// none. It is made when a command first uses it.
	Cache string
	// Network lets the command reach the network (and local services).
	Network bool
}

// kind is what a policy entry allows.
type kind int

const (
	kindWritable kind = iota
	kindReadOnly
	kindHidden
	// kindMissing is a path that must not be created: a placeholder.
	kindMissing
)

// entry is one resolved path of a policy.
type entry struct {
	path string
	kind kind
	dir  bool
}

// resolved is a policy with every path made absolute, clean and free of
// symlinks (the mechanisms match real paths), missing paths dropped, and
// entries ordered outermost first.
type resolved struct {
	entries []entry
	cache   string
	network bool
	// empty is an empty folder, bound read-only where a path must not be
	// created (kindMissing).
	empty string
	// resolvDir is the folder under /run holding the resolv.conf that
	// /etc/resolv.conf links to (systemd-resolved, NetworkManager), kept
	// visible when the command has network; "" when it is elsewhere.
	resolvDir string
}

// WritableFolders lists the folders a command under p may change,
// resolved (the workspace folders, sandboxWritable, the cache), outermost
// only, for the approval.
func (p Policy) WritableFolders() []string {
	r := resolve(p, false)
	var out []string
	for _, e := range r.entries {
		if e.kind != kindWritable {
			continue
		}
		nested := false
		for _, o := range out {
			if within(o, e.path) {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, e.path)
		}
	}
	return out
}

// resolve resolves p. With create, it makes the cache folder (a command is
// about to use it); without, a cache folder not made yet is listed as it
// will be (preparing a call changes nothing).
func resolve(p Policy, create bool) resolved {
	r := resolved{network: p.Network}
	if p.Network {
		if t, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && within("/run", t) {
			r.resolvDir = filepath.Dir(t)
		}
	}
	seen := map[string]int{} // path -> index in r.entries
	realPath := realPaths()
	add := func(path string, k kind) {
		real, fi, ok := realPath(path)
		if !ok {
			return
		}
		if k == kindWritable && !fi.IsDir() {
			return // only folders are made writable
		}
		if i, ok := seen[real]; ok {
			// the same path twice: the stricter kind wins
			if k > r.entries[i].kind {
				r.entries[i].kind = k
			}
			return
		}
		seen[real] = len(r.entries)
		r.entries = append(r.entries, entry{path: real, kind: k, dir: fi.IsDir()})
	}
	if p.Cache != "" && filepath.IsAbs(p.Cache) {
		if create {
			_ = os.MkdirAll(p.Cache, 0o700) // before it is resolved, so it can be bound
		}
		if real, _, ok := realPath(p.Cache); ok {
			r.cache = real
			add(real, kindWritable)
		} else if !create {
			path := filepath.Clean(p.Cache)
			seen[path] = len(r.entries)
			r.entries = append(r.entries, entry{path: path, kind: kindWritable, dir: true})
		}
	}
	for _, w := range p.Writable {
		add(w, kindWritable)
	}
	// A read-only path gone since the walk (a placeholder of a command
	// that ended meanwhile, a file the person removed) must not be
	// created either: inside a writable folder it becomes a placeholder.
	var gone []string
	for _, ro := range p.ReadOnly {
		n := len(r.entries)
		add(ro, kindReadOnly)
		if len(r.entries) == n && filepath.IsAbs(ro) {
			// (a file this process seeds is seeded again instead, see
			// Sandbox.holdFor: as an empty folder git could not read it)
			if _, err := os.Lstat(ro); err != nil && !seededHere(ro) {
				gone = append(gone, ro)
			}
		}
	}
	for _, h := range p.Hidden {
		add(h, kindHidden)
	}
	missing := func(m string, writableOnly bool) {
		m = filepath.Clean(m)
		if _, err := os.Lstat(m); err == nil {
			add(m, kindReadOnly) // made meanwhile: it stays as it is
			return
		}
		// its first missing component (the walk saw the folders above
		// it; one may have gone since): a placeholder there keeps the
		// whole path from being made
		climbed := false
		for d := filepath.Dir(m); d != m && d != "/"; m, d = d, filepath.Dir(d) {
			if _, err := os.Lstat(d); err == nil {
				break
			}
			climbed = true
		}
		parent, _, ok := realPath(filepath.Dir(m))
		if !ok {
			return
		}
		path := filepath.Join(parent, filepath.Base(m))
		if (writableOnly || climbed) && !inWritable(r.entries, path) {
			return // read-only to the command anyway
		}
		if _, dup := seen[path]; !dup {
			seen[path] = len(r.entries)
			r.entries = append(r.entries, entry{path: path, kind: kindMissing})
		}
	}
	for _, m := range p.Missing {
		if filepath.IsAbs(m) {
			missing(m, false)
		}
	}
	for _, m := range gone {
		missing(m, true)
	}
	// A placeholder below a read-only or hidden entry is not needed (and
	// could not be made there).
	kept := r.entries[:0]
	for _, e := range r.entries {
		if e.kind == kindMissing && coveredBy(r.entries, e.path) {
			continue
		}
		kept = append(kept, e)
	}
	r.entries = kept
	sort.SliceStable(r.entries, func(i, j int) bool {
		di, dj := depth(r.entries[i].path), depth(r.entries[j].path)
		if di != dj {
			return di < dj
		}
		return r.entries[i].path < r.entries[j].path
	})
	return r
}

// inWritable reports whether p lies below a writable folder of entries.
func inWritable(entries []entry, p string) bool { return deepestWritable(entries, p) != "" }

// deepestWritable is the deepest writable folder of entries that p lies
// below ("" for none).
func deepestWritable(entries []entry, p string) string {
	best := ""
	for _, e := range entries {
		if e.kind == kindWritable && e.path != p && within(e.path, p) && len(e.path) > len(best) {
			best = e.path
		}
	}
	return best
}

// coveredBy reports whether a read-only or hidden folder of entries holds
// p.
func coveredBy(entries []entry, p string) bool {
	for _, e := range entries {
		if (e.kind == kindReadOnly || e.kind == kindHidden) && e.dir && within(e.path, p) && e.path != p {
			return true
		}
	}
	return false
}

// realPaths returns a realPath that remembers the folders it resolved:
// the dozens of entries of a workspace's policy lie in a handful of
// folders, and resolving every component of each entry's path again (an
// lstat each) was most of kin's cost of starting a command after the
// walk. An entry whose folder was resolved costs one lstat; a symlink at
// its end is resolved in full.
func realPaths() func(string) (string, os.FileInfo, bool) {
	folders := map[string]string{}
	return func(p string) (string, os.FileInfo, bool) {
		if p == "" || !filepath.IsAbs(p) {
			return "", nil, false
		}
		p = filepath.Clean(p)
		if p == "/" {
			return realPath(p)
		}
		dir, base := filepath.Dir(p), filepath.Base(p)
		rd, ok := folders[dir]
		if !ok {
			r, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return "", nil, false
			}
			folders[dir], rd = r, r
		}
		real := filepath.Join(rd, base)
		fi, err := os.Lstat(real)
		switch {
		case err != nil:
			return "", nil, false
		case fi.Mode()&os.ModeSymlink != 0:
			return realPath(real)
		case fi.IsDir():
			folders[p] = real
		}
		return real, fi, true
	}
}

// realPath resolves every symlink in an absolute path that exists.
func realPath(p string) (string, os.FileInfo, bool) {
	if p == "" || !filepath.IsAbs(p) {
		return "", nil, false
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", nil, false
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, false
	}
	return real, fi, true
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// within reports whether p is root or below it.
func within(root, p string) bool {
	if root == "/" || p == root {
		return true
	}
	return strings.HasPrefix(p, root+"/")
}

// For returns the policy for a command in the workspace roots: the roots,
// the configured extra folders and the workspace's own cache folder
// writable; the trust boundary's protection of them (computed once for the
// command by boundary.Workspace.Protect and passed down here, never
// re-derived) read-only, impossible to create or pinned; hidden (the
// boundary's secrets) and the configured hidden paths hidden.
func (s *Sandbox) For(roots []string, network bool, prot boundary.Protection, hidden []string) Policy {
	p := Policy{Cache: s.CacheFor(roots), Network: network}
	p.Hidden = append(append(p.Hidden, s.cfg.Hidden...), hidden...)
	p.Writable = append(append(p.Writable, roots...), s.cfg.Writable...)
	// a .git folder is writable (git add, git commit) but a mount point
	// of its own, which cannot be moved aside and replaced
	p.Writable = append(p.Writable, prot.Pins...)
	p.ReadOnly = append(p.ReadOnly, prot.ReadOnly...)
	p.Missing = append(p.Missing, prot.Missing...)
	p.Seeded = prot.Seeded
	return p
}

// Extra are the folders besides the roots that commands may change (the
// configured ones, and the cache folder of the workspace): what
// boundary.Workspace.Protect looks at besides the roots. Every caller asks
// for them right before that walk, so Extra settles first (Settle): the
// walk never sees a placeholder of an ended command about to be removed.
func (s *Sandbox) Extra(roots []string) []string {
	Settle()
	out := append([]string(nil), s.cfg.Writable...)
	if c := s.CacheFor(roots); c != "" {
		out = append(out, c)
	}
	return out
}

// CacheFor is the cache folder of commands in these roots: one per
// workspace, named by its first root's identity (boundary.FolderID), so
// nothing a command in one repository plants in a tool cache reaches a
// build of another. "" without a cache.
func (s *Sandbox) CacheFor(roots []string) string {
	if s.cfg.Cache == "" || len(roots) == 0 {
		return s.cfg.Cache
	}
	return filepath.Join(s.cfg.Cache, boundary.FolderID(roots[0]))
}
