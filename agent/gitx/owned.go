package gitx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrOtherCheckout is a work tree whose git folder belongs to another
// checkout (Owned).
var ErrOtherCheckout = errors.New("this folder's .git names the git folder of another checkout")

// Owned refuses a work tree whose git folder is another checkout's. A
// folder's ".git" may be a file naming any git folder ("gitdir:
// ../other-project/.git") or a symlink to one, and a git folder's
// "commondir" file may name another repository's .git, whose objects and
// refs git then uses; either way git takes top as a work tree of that
// repository: a review of top would send the other repository's content,
// a worktree session made from top would be a branch of it, with its
// objects and refs writable to the session's commands. Nothing in a git
// folder says which .git may name it, so a git folder is top's own only
// when it says so itself:
//   - it is top/.git, a folder (a symlink there names some other one),
//     with no commondir naming another folder;
//   - it is a linked worktree's folder, in its common folder's
//     "worktrees" (where git worktree add makes it, inside the other
//     repository: no folder top brings can be there), whose "gitdir" file
//     points back at top/.git;
//   - its configuration names top as its work tree (core.worktree, from
//     which git resolved top): a submodule's folder in the superproject's
//     .git/modules has it. A folder kept apart with git init
//     --separate-git-dir has not; the error says how to claim it.
func Owned(ctx context.Context, top string) error {
	out, err := Output(ctx, top, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return err
	}
	gd := realPath(strings.TrimSpace(out))
	// top's own .git entry, its last element not resolved: a symlink
	// resolved to the folder it names would pass for it
	dotGit := filepath.Join(realPath(top), ".git")
	other := fmt.Errorf("%w: the .git of %s names the git folder %s", ErrOtherCheckout, top, gd)
	if _, err := os.Lstat(filepath.Join(gd, "commondir")); err == nil {
		common, ok := pathIn(filepath.Join(gd, "commondir"), gd)
		if !ok {
			return other
		}
		if common = realPath(common); common != gd {
			if filepath.Dir(gd) != filepath.Join(common, "worktrees") {
				return fmt.Errorf("%w, whose commondir names the git folder %s", other, common)
			}
			if back, ok := pathIn(filepath.Join(gd, "gitdir"), gd); ok {
				if fi, err := os.Lstat(back); err == nil && fi.Mode().IsRegular() && filepath.Base(back) == ".git" &&
					filepath.Join(realPath(filepath.Dir(back)), ".git") == dotGit {
					return nil
				}
			}
			return other
		}
	}
	if fi, err := os.Lstat(dotGit); err == nil && fi.IsDir() && dotGit == gd {
		return nil
	}
	wt, err := Output(ctx, top, "config", "--local", "--includes", "core.worktree")
	if wt = strings.TrimSpace(wt); err == nil && wt != "" {
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(gd, wt)
		}
		if realPath(wt) == realPath(top) {
			return nil
		}
	}
	return fmt.Errorf("%w, which does not name %s as its work tree (if that git folder is this checkout's own, say so: git -C %s config core.worktree %s)", other, top, top, top)
}

// smallFile is the trimmed content of a regular file of at most 16 KiB
// (what git writes there is one path). The file is opened without
// waiting and without following a symlink, and checked once open: a
// FIFO in its place (even one swapped in after a look at the path) would
// otherwise block open(2) until a writer came, which no context cancels.
func smallFile(p string) (string, bool) {
	const max = 4 * 4096
	beforeOpen(p)
	f, err := os.OpenFile(p, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || len(b) > max {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// pathIn is the path the small file p holds (a commondir, a gitdir: see
// smallFile), a relative one taken from base, as git takes it.
func pathIn(p, base string) (string, bool) {
	s, ok := smallFile(p)
	if ok && !filepath.IsAbs(s) {
		s = filepath.Join(base, s)
	}
	return s, ok
}

// beforeOpen is a test's hook: it swaps the file smallFile is about to
// open.
var beforeOpen = func(string) {}

// realPath is p with symlinks resolved, or p cleaned when it cannot be.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
