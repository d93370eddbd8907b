package sandbox

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
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
	for _, ro := range p.ReadOnly {
		add(ro, kindReadOnly)
	}
	for _, h := range p.Hidden {
		add(h, kindHidden)
	}
	sort.SliceStable(r.entries, func(i, j int) bool {
		di, dj := depth(r.entries[i].path), depth(r.entries[j].path)
		if di != dj {
			return di < dj
		}
		return r.entries[i].path < r.entries[j].path
	})
	return r
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
// the configured extra folders and the cache writable, the configured
// hidden paths hidden, and in every writable folder the parts that run
// code later outside the sandbox (see Protected) read-only.
func (s *Sandbox) For(roots []string, network bool) Policy {
	p := Policy{Cache: s.cfg.Cache, Network: network}
	p.Hidden = append(p.Hidden, s.cfg.Hidden...)
	for _, w := range append(append([]string(nil), roots...), s.cfg.Writable...) {
		p.Writable = append(p.Writable, w)
		if fi, err := os.Lstat(filepath.Join(w, ".git")); err == nil && fi.IsDir() {
			// writable (git add, git commit) but a mount point of its own,
			// which cannot be moved aside and replaced
			p.Writable = append(p.Writable, filepath.Join(w, ".git"))
		}
		p.ReadOnly = append(p.ReadOnly, Protected(w)...)
	}
	return p
}

// Protected lists what stays read-only in a writable folder because it
// decides what runs later, outside any sandbox: the repository's hooks and
// config (core.hooksPath, filters, aliases, fsmonitor all live there), the
// .git entry itself (so it cannot be moved aside and replaced), and kin's
// own project config (.kin: which MCP servers start). Only what exists.
// (For also makes a .git folder a mount point of its own.)
func Protected(dir string) []string {
	var out []string
	add := func(p string) {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	git := filepath.Join(dir, ".git")
	fi, err := os.Lstat(git)
	switch {
	case err != nil:
	case fi.IsDir():
		out = append(out, gitInternals(git)...)
	case fi.Mode().IsRegular():
		// a worktree: ".git" names the real git dir; the file itself and
		// the common dir's internals are protected
		add(git)
		if gd := gitDirOf(git); gd != "" {
			out = append(out, gitInternals(gd)...)
			if common := commonDirOf(gd); common != "" {
				out = append(out, gitInternals(common)...)
			}
		}
	}
	if isGitDir(dir) { // a bare repository, or a .git folder made writable
		out = append(out, gitInternals(dir)...)
	}
	add(filepath.Join(dir, ".kin"))
	return out
}

func gitInternals(gitDir string) []string {
	var out []string
	for _, name := range []string{"hooks", "config", "info/attributes"} {
		p := filepath.Join(gitDir, name)
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func isGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "config", "objects"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// gitDirOf reads a ".git" file ("gitdir: <path>").
func gitDirOf(gitFile string) string {
	b, err := os.ReadFile(gitFile)
	if err != nil {
		return ""
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gd := strings.TrimSpace(rest)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(gitFile), gd)
	}
	return filepath.Clean(gd)
}

// commonDirOf reads a worktree git dir's "commondir".
func commonDirOf(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return ""
	}
	cd := strings.TrimSpace(string(b))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gitDir, cd)
	}
	return filepath.Clean(cd)
}
