package boundary

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Protection is what a confined command may not change in the folders it
// may write, computed once per command (Protect) and passed down to the
// sandbox, which renders it.
type Protection struct {
	// ReadOnly are existing paths a command may read but not change: the
	// files that run things later, git's internals outside the
	// allow-list, secret-looking files.
	ReadOnly []string
	// Missing are paths that do not exist and that a command must not
	// create (the sandbox puts a read-only placeholder there while the
	// command runs).
	Missing []string
	// Seeded are paths that must not be created by a command but whose
	// mere existence changes what git does, so a placeholder would break
	// it: .git/commondir. kin writes each (the content given: a valid
	// value, the git folder itself) before the command runs, keeps it
	// read-only, and removes it after.
	Seeded map[string]string
	// Pins are .git folders bound as mount points of their own: writable
	// (git add, git commit) but impossible to move aside and replace.
	Pins []string
	// Gaps say where the protection is incomplete: a walk cut short, a
	// .git that is a symlink (a link cannot be pinned). A command with
	// gaps is always asked, never allowed by a mode or a grant.
	Gaps []string
}

// The walk that looks for what to protect in a workspace folder runs
// before every command, and what it costs is bounded by two limits
// (dependencies and build output aside). The first walk of a kin process
// reads every entry (about 4 µs each on the 2-core VM of the README's
// numbers: 0.8 s at ProtectMaxEntries, done in the background when a
// session opens); every later one reuses the folders unchanged since and
// costs an lstat per folder (about 3.3 µs each: 65 ms at
// ProtectMaxFolders). A workspace folder past either is not fully looked
// at, and its commands are always asked (Protection.Gaps says so).
const (
	ProtectMaxEntries = 200000
	ProtectMaxFolders = 20000
)

// maxEntries and maxFolders are the limits the walk applies: the two
// above, lowered only by tests (export_test.go), which cannot make
// 200,000 files.
var maxEntries, maxFolders = ProtectMaxEntries, ProtectMaxFolders

// protectSkip are folders not looked into: dependencies and build output,
// which hold no files that a person's tools run later from the project.
var protectSkip = map[string]bool{
	"node_modules": true, "vendor": true, "target": true, "dist": true, "build": true,
	".venv": true, "venv": true, "__pycache__": true, ".cache": true, ".tox": true, ".gradle": true,
}

// gitWritable are the entries of a git folder commands may change: what
// git add, commit, fetch, merge, rebase and stash write. Everything else
// that exists there is read-only (config, hooks, info, modules,
// worktrees, commondir...), and gitNever are made impossible to create.
var gitWritable = map[string]bool{
	"objects": true, "refs": true, "logs": true, "index": true, "HEAD": true, "packed-refs": true,
	"FETCH_HEAD": true, "ORIG_HEAD": true, "MERGE_HEAD": true, "MERGE_MSG": true, "MERGE_MODE": true,
	"MERGE_RR": true, "AUTO_MERGE": true, "CHERRY_PICK_HEAD": true, "REVERT_HEAD": true, "REBASE_HEAD": true,
	"BISECT_LOG": true, "BISECT_START": true, "BISECT_TERMS": true, "BISECT_EXPECTED_REV": true,
	"BISECT_ANCESTORS_OK": true, "BISECT_NAMES": true, "BISECT_RUN": true,
	"COMMIT_EDITMSG": true, "TAG_EDITMSG": true, "SQUASH_MSG": true, "NOTES_MERGE_PARTIAL": true,
	"description": true, "shallow": true, "lfs": true, "rr-cache": true, "gc.pid": true, "gc.log": true,
	"rebase-merge": true, "rebase-apply": true, "sequencer": true, "FETCH_HEAD.lock": true,
}

// gitNever are the entries of a git folder that decide what git runs or
// where it looks for its config: never writable (like every entry that is
// not in gitWritable), and never creatable either. (worktrees, read only
// by git run in a linked worktree, which a command cannot check out where
// kin does not see it, is read-only when it exists and not kept from being
// made: every placeholder costs a command's start a mount.)
var gitNever = []string{"config", "config.worktree", "hooks", "commondir", "gitdir", "info", "modules"}

// Protect computes what commands may not change in the writable folders:
// for each workspace root the whole tree is looked at (up to
// ProtectMaxEntries entries and ProtectMaxFolders folders, dependency
// folders skipped), for the other writable folders (sandboxWritable, the
// cache) their own .git only.
func (w *Workspace) Protect(extra []string) Protection {
	p := &protector{ws: w, seen: map[string]bool{}}
	p.all = append(p.all, w.real...)
	for _, e := range extra {
		p.all = append(p.all, RealPath(filepath.Clean(e)))
	}
	// a kin worktree's git folders: writable, pinned, protected
	// (worktree.go); before the roots, so the worktree's .git finds them
	git := w.worktreeGit()
	p.all = append(p.all, git...)
	p.out.Pins = append(p.out.Pins, git...)
	for _, r := range w.real {
		p.folder(r, true)
	}
	for _, e := range extra {
		p.folder(RealPath(filepath.Clean(e)), false)
	}
	p.bound()
	return p.out
}

type protector struct {
	ws   *Workspace
	out  Protection
	seen map[string]bool
	// all are the folders commands may change; writable is the one being
	// looked at.
	all      []string
	writable string
	entries  int
	folders  int // folders looked into below writable
	// ahead are the stamps of writable's kept folders, read before its
	// walk (stampsAhead)
	ahead map[string]dirStamp
	// placedSubs counts the submodules' .git kept from being planted
	// (submoduleGit)
	placedSubs int
}

func (p *protector) readOnly(path string) {
	if !p.seen[path] {
		p.seen[path] = true
		p.out.ReadOnly = append(p.out.ReadOnly, path)
	}
}

// missing notes that path must not be created: its first missing
// component becomes the placeholder (a missing .github blocks
// .github/workflows).
func (p *protector) missing(path string) {
	base := ""
	for _, w := range p.all {
		if Within(w, path) && path != w && len(w) > len(base) {
			base = w
		}
	}
	if base == "" {
		return // outside every writable folder: nothing can create it
	}
	rel, _ := filepath.Rel(base, path)
	cur := base
	for _, e := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, e)
		fi, err := os.Lstat(cur)
		switch {
		case err != nil:
			if !p.seen[cur] {
				p.seen[cur] = true
				p.out.Missing = append(p.out.Missing, cur)
			}
			return
		case fi.Mode()&fs.ModeSymlink != 0:
			p.symlink(cur)
			return
		case !fi.IsDir():
			p.readOnly(cur) // a file where a folder would be: keep it
			return
		}
	}
	p.readOnly(cur)
}

// symlink protects a symlink in a protected place: what it points to stays
// read-only, but a link cannot be pinned, so it is a gap.
func (p *protector) symlink(path string) {
	if t, err := filepath.EvalSymlinks(path); err == nil && p.inWritable(t) {
		p.readOnly(t)
	}
	p.gap("%s is a symlink: kin keeps what it points to read-only, but a command could replace the link itself", path)
}

// inWritable reports whether path is in a folder commands may change (only
// there does anything need protecting).
func (p *protector) inWritable(path string) bool {
	for _, w := range p.all {
		if Within(w, path) {
			return true
		}
	}
	return false
}

func (p *protector) gap(format string, args ...any) {
	p.out.Gaps = append(p.out.Gaps, fmt.Sprintf(format, args...))
}

// folder protects one writable folder; tree: look below its top too.
func (p *protector) folder(dir string, tree bool) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return
	}
	p.ahead = nil
	if tree {
		defer walkAlone(dir)()
		p.ahead = stampsAhead(dir)
	}
	p.writable, p.entries, p.folders = dir, 0, 0
	if isGitDir(dir) { // a bare repository, or a .git folder as a root
		p.gitDir(dir, false)
	}
	if !tree {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			p.gitEntry(filepath.Join(dir, ".git"))
		}
		return
	}
	// the top: every entry of the list, existing or not
	for _, l := range runsLater {
		path := filepath.Join(dir, filepath.FromSlash(l.path))
		if l.path == ".git" {
			if _, err := os.Lstat(path); err == nil {
				p.gitEntry(path)
			} else {
				p.missing(path)
			}
			continue
		}
		fi, err := os.Lstat(path)
		if err == nil {
			// a folder along it that is a symlink (.github linked to
			// ci/) is no mount: a command could replace it and make the
			// path anew (missing() says so for paths that do not exist)
			if link := symlinkAlong(dir, l.path); link != "" {
				p.gap("%s is a symlink: kin keeps what %s leads to read-only, but a command could replace the link itself", link, path)
			}
		}
		switch {
		case err != nil:
			if l.top {
				p.missing(path)
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			p.symlink(path)
		default:
			p.readOnly(path)
		}
	}
	p.submodules(dir)
	if !p.walk(dir) {
		p.gap("kin looked at only the first %d entries or %d folders of %s for files that run things later (git's config and hooks of nested repositories, instructions, .env files), so it cannot promise the rest stay unchanged", maxEntries, maxFolders, dir)
	}
}

// walk looks below dir for what any depth counts: nested repositories,
// the runs-later files that count at every depth, secret-looking files.
// It reports false when it was cut short. What a folder's entries call
// for comes from scanDir (kept while the folder is unchanged); entries are
// counted in the folder's order, so the limit cuts the walk where looking
// at every entry would.
func (p *protector) walk(dir string) bool {
	s, ok := p.scanDir(dir)
	if !ok {
		return true
	}
	if p.folders++; p.folders > maxFolders {
		return false
	}
	last := -1 // the folder's last entry counted
	for _, it := range s.items {
		if p.entries += it.idx - last; p.entries > maxEntries {
			return false
		}
		last = it.idx
		path := filepath.Join(dir, it.name)
		switch {
		case it.git:
			p.gitEntry(path)
			continue
		case it.dir && p.ws.secrets.kinHome == path:
			continue
		case it.protect:
			p.readOnly(path)
			if it.dir {
				continue
			}
		}
		if it.gitmodules {
			p.submodules(dir)
		}
		if it.dir && !p.walk(path) {
			return false
		}
	}
	p.entries += s.count - 1 - last
	return p.entries <= maxEntries
}

// symlinkAlong returns the first folder along the slash-separated rel
// below dir (rel's last name aside) that is a symlink, or "".
func symlinkAlong(dir, rel string) string {
	elems := strings.Split(rel, "/")
	cur := dir
	for _, e := range elems[:len(elems)-1] {
		cur = filepath.Join(cur, e)
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return cur
		}
	}
	return ""
}

// topName reports whether a name at the top of a writable folder was
// handled from the list already.
func topName(name string) bool {
	for _, l := range runsLater {
		if first, _, _ := strings.Cut(l.path, "/"); first == name {
			return true
		}
	}
	return false
}

// gitEntry protects a .git entry: a folder (a repository), a file naming
// the real git folder (a worktree, a submodule), or a symlink to one.
func (p *protector) gitEntry(path string) {
	fi, err := os.Lstat(path)
	if err != nil {
		return
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if t, err := filepath.EvalSymlinks(path); err == nil {
			p.gitDir(t, false)
			p.gitlinked(filepath.Dir(path), t)
		}
		p.gap("%s is a symlink: kin keeps git's config and hooks where it points read-only, but a command could replace the link itself", path)
	case fi.IsDir():
		p.gitDir(path, true)
		p.gitlinked(filepath.Dir(path), path)
	case fi.Mode().IsRegular():
		p.readOnly(path)
		gd, err := gitDirOf(path)
		if err != nil {
			p.unreadable(path, err)
		} else if gd != "" {
			p.gitDir(gd, false)
			p.gitlinked(filepath.Dir(path), gd)
		}
	}
}

// gitDir protects a git folder: pinned (when asked and it is in the
// folder being protected), every entry but gitWritable read-only, gitNever
// impossible to create, and its common folder the same way.
func (p *protector) gitDir(dir string, pin bool) {
	if p.seen["git:"+dir] {
		return
	}
	p.seen["git:"+dir] = true
	if !p.inWritable(dir) {
		return // read-only to commands anyway
	}
	if pin && Within(p.writable, dir) {
		p.out.Pins = append(p.out.Pins, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !gitWritable[e.Name()] && !strings.HasSuffix(e.Name(), ".lock") {
			p.readOnly(filepath.Join(dir, e.Name()))
		}
	}
	for _, n := range gitNever {
		path := filepath.Join(dir, n)
		if n == "commondir" {
			// git dies on a commondir it cannot read (a placeholder): it
			// gets one naming this git folder itself, which git reads as
			// "no other common folder". One naming it already (another
			// command's seed, maybe another kin's) is seeded too, so the
			// sandbox writes it again, never a placeholder, should that
			// command's end remove it before this one starts (a seed
			// that stands is kept as it is).
			if fi, err := os.Lstat(path); err != nil || fi.Mode().IsRegular() && fi.Size() == int64(len(dir)+1) && readsAs(path, dir+"\n") {
				if p.out.Seeded == nil {
					p.out.Seeded = map[string]string{}
				}
				p.out.Seeded[path] = dir + "\n"
			} else {
				// made since the folder was read above (another
				// command's seed): kept read-only like any entry
				p.readOnly(path)
			}
			continue
		}
		p.missing(path)
	}
	common, err := commonDirOf(dir)
	if err != nil {
		p.unreadable(filepath.Join(dir, "commondir"), err)
	} else if common != "" && common != dir {
		p.gitDir(common, false)
	}
}

// unreadable notes a file naming a git folder that kin could not read (a
// FIFO a command made, a sparse file of a terabyte): which folder git
// would take it for is unknown, so that folder cannot be protected.
func (p *protector) unreadable(path string, err error) {
	p.gap("kin could not read %s (%v), so it cannot tell which git folder it names", path, err)
}

// submodules makes the .git of every submodule .gitmodules in dir names
// impossible to plant where it is missing (git status enters a populated
// submodule and reads its config).
func (p *protector) submodules(dir string) {
	name := filepath.Join(dir, ".gitmodules")
	b, err := readGitFileUpTo(name, maxGitmodules)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		p.gap("kin could not read %s (%v), so it cannot tell where submodules go", name, err)
		return
	}
	// whole lines, however long (git's are not limited), and keys as git
	// compares them: case-insensitively
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		sub := filepath.Join(dir, filepath.FromSlash(strings.Trim(strings.TrimSpace(v), `"`)))
		if !Within(dir, sub) || sub == dir {
			continue
		}
		if !p.submoduleGit(sub) {
			return
		}
	}
}

func isGitDir(dir string) bool {
	for _, name := range []string{"HEAD", "config", "objects"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// gitDirOf reads a ".git" file ("gitdir: <path>"): "" when there is none
// or it names none, an error when it is there but cannot be read.
func gitDirOf(gitFile string) (string, error) {
	b, err := readGitFile(gitFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", nil
	}
	gd := strings.TrimSpace(rest)
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(gitFile), gd)
	}
	return RealPath(filepath.Clean(gd)), nil
}

// commonDirOf reads a git folder's "commondir" (a worktree's): "" when
// there is none, an error when it is there but cannot be read.
func commonDirOf(gitDir string) (string, error) {
	b, err := readGitFile(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	cd := strings.TrimSpace(string(b))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gitDir, cd)
	}
	return RealPath(filepath.Clean(cd)), nil
}

// readsAs reports whether the file at path holds exactly content.
func readsAs(path, content string) bool {
	b, err := readGitFile(path)
	return err == nil && string(b) == content
}

// maxGitFile bounds what kin reads of a file git takes a folder's path
// from (a .git file, a commondir): git itself refuses a .git file over
// four times PATH_MAX.
const maxGitFile = 4 * 4096

// readGitFile reads such a file, which a command may have made in a
// nested repository: without blocking on a FIFO (its open would wait for
// a writer, and with it every later command's walk) and without holding a
// sparse file of a terabyte in memory.
func readGitFile(path string) ([]byte, error) { return readGitFileUpTo(path, maxGitFile) }

// maxGitmodules bounds what kin reads of a .gitmodules: a few hundred
// bytes a submodule.
const maxGitmodules = 4 << 20

func readGitFileUpTo(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		// git reads no folder as such a file (and an empty one may be
		// another command's placeholder): there is none
		return nil, fmt.Errorf("%s is a folder: %w", path, fs.ErrNotExist)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w (%s)", ErrNotRegular, fi.Mode().Type())
	}
	return readUpTo(f, fi, max)
}
