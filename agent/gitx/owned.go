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
// ../other-project/.git"), and git then takes top as the work tree of that
// repository: a review of top would send the other repository's content,
// a worktree session made from top would be a branch of it, with its
// objects and refs writable to the session's commands. Refused: the
// ".git" folder of another folder (unless its configuration names its
// work tree: core.worktree, from which git resolved top), and a linked
// worktree's folder whose "gitdir" file (git worktree add writes it) does
// not point back at top/.git. A git folder kept apart (git init
// --separate-git-dir, a submodule's in the superproject's .git/modules)
// is top's own.
func Owned(ctx context.Context, top string) error {
	out, err := Output(ctx, top, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return err
	}
	gd := realPath(strings.TrimSpace(out))
	dotGit := realPath(filepath.Join(top, ".git"))
	if gd == dotGit {
		return nil
	}
	other := fmt.Errorf("%w: the .git of %s names the git folder %s", ErrOtherCheckout, top, gd)
	if _, err := os.Lstat(filepath.Join(gd, "commondir")); err == nil {
		if back, ok := smallFile(filepath.Join(gd, "gitdir")); ok {
			if !filepath.IsAbs(back) {
				back = filepath.Join(gd, back)
			}
			if realPath(back) == dotGit {
				return nil
			}
		}
		return other
	}
	if filepath.Base(gd) == ".git" {
		if wt, err := Output(ctx, top, "config", "--local", "core.worktree"); err == nil && strings.TrimSpace(wt) != "" {
			return nil
		}
		return other
	}
	return nil
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
