package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx"
	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a folder the person opens (an archive keeps a symlink or a
// .git file as it is) makes git take it as a work tree of another
// repository of theirs: its .git a symlink to ../victim/.git (or to a
// linked worktree's .git file), a .git file naming a git folder the
// victim keeps apart (git init --separate-git-dir), or a git folder of
// its own whose commondir file names the victim's .git (git then uses
// the victim's objects and refs, as for a linked worktree). Owned let
// each through (a resolved symlink is the folder git uses; a folder not
// named .git counted as "kept apart", whoever's it was; a folder at .git,
// or one whose gitdir file points back, was taken as top's own), so a
// worktree session made there was a branch of the victim, its objects
// and refs writable to the session's commands, and a review sent the
// victim's files to the model. A git folder is top's own when it is
// top/.git itself with no other common folder, a linked worktree's (in
// its common folder's worktrees/) whose gitdir file points back, or one
// whose core.worktree names top (a submodule's; and a folder kept apart
// that the person claimed with git config core.worktree).
func TestOwnedRefusesAnotherRepositorysGitFolder(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	victim := gitxtest.Repo(t, filepath.Join(base, "victim"), map[string]string{"v.txt": "the victim's code\n"})
	sep := filepath.Join(base, "sep")
	store := filepath.Join(base, "store.git")
	gitxtest.Git(t, base, "init", "-q", "--separate-git-dir="+store, sep)
	gitxtest.Write(t, sep, "s.txt", "kept apart\n")
	gitxtest.Git(t, sep, "add", "-A")
	gitxtest.Git(t, sep, "commit", "-q", "-m", "s")
	sub := gitxtest.Repo(t, filepath.Join(base, "subsrc"), map[string]string{"m.txt": "module\n"})
	gitxtest.Git(t, victim, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod")

	hostile := func(name string, dotGit func(string) error) string {
		dir := filepath.Join(base, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := dotGit(filepath.Join(dir, ".git")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gitFile := func(target string) func(string) error {
		return func(p string) error { return os.WriteFile(p, []byte("gitdir: "+target+"\n"), 0o644) }
	}
	linked := filepath.Join(base, "linked")
	gitxtest.Git(t, victim, "worktree", "add", "-q", "-b", "side", linked, "HEAD")
	// a git folder whose commondir names the victim's .git: git uses the
	// victim's objects and refs, as for a linked worktree of it
	commonDir := func(p string) error {
		for name, body := range map[string]string{"HEAD": "ref: refs/heads/main\n", "commondir": filepath.Join(victim, ".git") + "\n", "gitdir": p + "\n"} {
			if err := os.WriteFile(filepath.Join(p, name), []byte(body), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	for name, dotGit := range map[string]func(string) error{
		"symlink":      func(p string) error { return os.Symlink("../victim/.git", p) },
		"separate":     gitFile(store),
		"separateLink": func(p string) error { return os.Symlink(store, p) },
		"module":       gitFile(filepath.Join(victim, ".git", "modules", "mod")),
		"dotgit":       gitFile("../victim/.git"),
		// the victim's linked worktree's .git file, whose gitdir points
		// back at that file
		"linkedLink": func(p string) error { return os.Symlink(filepath.Join(base, "linked", ".git"), p) },
		"commondir": func(p string) error {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
			return commonDir(p)
		},
		// the same folder kept beside .git, its gitdir file pointing back
		// at the .git file that names it
		"commondirBack": func(p string) error {
			kept := filepath.Join(filepath.Dir(p), ".kept")
			if err := os.Mkdir(kept, 0o755); err != nil {
				return err
			}
			if err := commonDir(kept); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(kept, "gitdir"), []byte(p+"\n"), 0o644); err != nil {
				return err
			}
			return os.WriteFile(p, []byte("gitdir: .kept\n"), 0o644)
		},
	} {
		dir := hostile(name, dotGit)
		if err := gitx.Owned(ctx, dir); !errors.Is(err, gitx.ErrOtherCheckout) {
			t.Errorf("%s: Owned = %v", name, err)
		}
	}
	// The checkouts themselves are their git folders' own: the victim,
	// its submodule's checkout, a linked worktree of it; the folder whose
	// git folder is kept apart once it names its work tree.
	if err := gitx.Owned(ctx, sep); !errors.Is(err, gitx.ErrOtherCheckout) || !strings.Contains(err.Error(), "core.worktree") {
		t.Errorf("a git folder kept apart that names no work tree: %v", err)
	}
	gitxtest.Git(t, sep, "config", "core.worktree", sep)
	for _, dir := range []string{victim, filepath.Join(victim, "mod"), linked, sep} {
		if err := gitx.Owned(ctx, dir); err != nil {
			t.Errorf("Owned(%s): %v", dir, err)
		}
	}
}
