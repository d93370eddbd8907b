package worktree

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

// The attack: a folder the person opens carries a .git file naming
// another repository of theirs ("gitdir: ../victim/.git"). git takes the
// folder as that repository's work tree, so a worktree session made there
// was a branch of the victim repository, checked out for the model, with
// the victim's objects and refs writable to the session's commands.
// Check refuses it and nothing is made; a real linked worktree of the
// person's (git worktree add) is still accepted.
func TestCheckRefusesAGitFileNamingAnotherCheckout(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	victim := gitxtest.Repo(t, filepath.Join(base, "victim"), map[string]string{"v.txt": "the victim's code\n"})
	hostile := filepath.Join(base, "hostile")
	write(t, filepath.Join(hostile, ".git"), "gitdir: ../victim/.git\n")
	if _, err := Check(ctx, hostile, "", sid); kind(err) != KindNotRepository {
		t.Fatalf("Check of a folder whose .git names another checkout: %v", err)
	}
	// the victim's linked worktree's own folder, named from elsewhere
	linked := filepath.Join(base, "linked")
	gitxtest.Git(t, victim, "worktree", "add", "-q", "-b", "side", linked, "HEAD")
	wtDir := strings.TrimSpace(gitxtest.Git(t, linked, "rev-parse", "--absolute-git-dir"))
	other := filepath.Join(base, "other")
	write(t, filepath.Join(other, ".git"), "gitdir: "+wtDir+"\n")
	if _, err := Check(ctx, other, "", sid); kind(err) != KindNotRepository {
		t.Fatalf("Check of a folder whose .git names another linked worktree's folder: %v", err)
	}
	// a .git symlink to the victim's .git, and a .git file naming a git
	// folder the victim keeps apart (git init --separate-git-dir): git
	// takes either folder as the victim's work tree just the same
	link := filepath.Join(base, "link")
	_ = os.MkdirAll(link, 0o755)
	if err := os.Symlink(filepath.Join(victim, ".git"), filepath.Join(link, ".git")); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(ctx, link, "", sid); kind(err) != KindNotRepository {
		t.Fatalf("Check of a folder whose .git is a symlink to another checkout's: %v", err)
	}
	sep := filepath.Join(base, "sep")
	store := filepath.Join(base, "store.git")
	gitxtest.Git(t, base, "init", "-q", "--separate-git-dir="+store, sep)
	write(t, filepath.Join(sep, "f.txt"), "f\n")
	gitxtest.Git(t, sep, "add", "f.txt")
	gitxtest.Git(t, sep, "commit", "-q", "-m", "f")
	apart := filepath.Join(base, "apart")
	write(t, filepath.Join(apart, ".git"), "gitdir: "+store+"\n")
	if _, err := Check(ctx, apart, "", sid); kind(err) != KindNotRepository {
		t.Fatalf("Check of a folder whose .git names another checkout's git folder kept apart: %v", err)
	}
	if got := gitxtest.Git(t, sep, "branch", "--list", "kin/*"); got != "" {
		t.Errorf("a branch was made in the repository kept apart: %q", got)
	}
	if got := gitxtest.Git(t, victim, "branch", "--list", "kin/*"); got != "" {
		t.Errorf("a branch was made in the victim: %q", got)
	}
	// The person's own linked worktree, the repository itself and a
	// repository whose git folder is kept apart, once that folder names
	// it as its work tree (the refusal says how), pass.
	if _, err := Check(ctx, sep, "", sid); kind(err) != KindNotRepository || !strings.Contains(err.Error(), "config core.worktree") {
		t.Fatalf("Check of a folder kept apart that names no work tree: %v", err)
	}
	gitxtest.Git(t, sep, "config", "core.worktree", sep)
	for _, dir := range []string{linked, victim, filepath.Join(victim, "sub"), sep} {
		_ = os.MkdirAll(dir, 0o755)
		if _, err := Check(ctx, dir, "", sid); err != nil {
			t.Errorf("Check(%s): %v", dir, err)
		}
	}
}
