package boundary_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kin-dev/kin/agent/boundary"
)

// kinWorktree makes a repository and a linked worktree of it in
// $KIN_HOME/worktrees/<session>, as agent/worktree does.
func kinWorktree(t *testing.T) (repo, home, wt string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := boundary.RealPath(t.TempDir())
	repo, home = filepath.Join(base, "repo"), filepath.Join(base, "kinhome")
	wt = filepath.Join(home, "worktrees", "s_1_abc")
	mkdirs(t, repo, filepath.Dir(wt))
	write(t, filepath.Join(repo, "a.txt"), "x")
	write(t, filepath.Join(repo, ".env"), "K=v")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"},
		{"-c", "core.hooksPath=" + os.DevNull, "worktree", "add", "-q", "-b", "kin/abc", wt},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return repo, home, wt
}

// The session's worktree is its workspace, not a secret of kin's home; its
// .env still is; the rest of kin's home is; and to a session rooted
// elsewhere the worktree is kin's home.
func TestKinWorktreeIsAWorkspaceNotASecret(t *testing.T) {
	repo, home, wt := kinWorktree(t)
	ws, err := boundary.NewWorkspace([]string{wt}, home)
	if err != nil {
		t.Fatal(err)
	}
	check := func(ws *boundary.Workspace, p string, secret bool) {
		t.Helper()
		tg, err := ws.Resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := ws.Secret(tg); (got != "") != secret {
			t.Errorf("Secret(%s) = %q, want secret=%v", p, got, secret)
		}
		if got := ws.SecretPath(tg.Real); (got != "") != secret {
			t.Errorf("SecretPath(%s) = %q, want secret=%v", p, got, secret)
		}
	}
	check(ws, filepath.Join(wt, "a.txt"), false)
	check(ws, wt, false)
	check(ws, filepath.Join(wt, ".env"), true)
	check(ws, filepath.Join(home, "settings.json"), true)
	check(ws, filepath.Join(home, "worktrees", "s_1_abc.json"), true)
	other, err := boundary.NewWorkspace([]string{repo}, home)
	if err != nil {
		t.Fatal(err)
	}
	check(other, filepath.Join(wt, "a.txt"), true)
	// a folder in worktrees/ that is not a linked worktree is kin's home
	plain := filepath.Join(home, "worktrees", "plain")
	write(t, filepath.Join(plain, "f"), "x")
	pws, _ := boundary.NewWorkspace([]string{plain}, home)
	check(pws, filepath.Join(plain, "f"), true)
	// the same rule for features that keep their own roots
	sec := ws.Secrets()
	if why := sec.ReasonIn(wt, filepath.Join(wt, "AGENTS.md")); why != "" {
		t.Errorf("ReasonIn(worktree AGENTS.md) = %q", why)
	}
	if why := sec.ReasonIn(wt, filepath.Join(wt, ".env")); why == "" {
		t.Error("ReasonIn(worktree .env) is no secret")
	}
	if why := sec.ReasonIn(plain, filepath.Join(plain, "f")); why == "" {
		t.Error("ReasonIn(a plain folder in worktrees/) is no secret")
	}
	if n := ws.Notice(); n != "" {
		t.Errorf("a worktree session gets the notice %q", n)
	}
}

// Commands of a worktree session may commit: its git folder and the
// repository's common one are writable mount points, and what decides
// what git runs there stays read-only or cannot be created.
func TestProtectKinWorktreeGitFolders(t *testing.T) {
	repo, home, wt := kinWorktree(t)
	ws, err := boundary.NewWorkspace([]string{wt}, home)
	if err != nil {
		t.Fatal(err)
	}
	p := ws.Protect(nil)
	common := filepath.Join(repo, ".git")
	gd := filepath.Join(common, "worktrees", "s_1_abc")
	for _, want := range []string{gd, common} {
		if !slices.Contains(p.Pins, want) {
			t.Errorf("%s not pinned writable: %v", want, p.Pins)
		}
	}
	for _, want := range []string{filepath.Join(wt, ".git"), filepath.Join(gd, "commondir"), filepath.Join(gd, "gitdir"),
		filepath.Join(common, "config"), filepath.Join(common, "hooks"), filepath.Join(common, "worktrees")} {
		if !slices.Contains(p.ReadOnly, want) {
			t.Errorf("%s not read-only: %v", want, p.ReadOnly)
		}
	}
	for _, want := range []string{filepath.Join(gd, "config.worktree"), filepath.Join(gd, "hooks"), filepath.Join(gd, "config")} {
		if !slices.Contains(p.Missing, want) {
			t.Errorf("%s can be created: %v", want, p.Missing)
		}
	}
	for _, ro := range []string{filepath.Join(gd, "index"), filepath.Join(gd, "HEAD"), filepath.Join(common, "objects"), filepath.Join(common, "refs")} {
		if slices.Contains(p.ReadOnly, ro) {
			t.Errorf("%s is read-only: a commit in the worktree would fail", ro)
		}
	}
	if len(p.Gaps) > 0 {
		t.Errorf("gaps: %v", p.Gaps)
	}
	// the repository opened as itself: nothing of this
	rws, _ := boundary.NewWorkspace([]string{repo}, home)
	if rp := rws.Protect(nil); slices.Contains(rp.Pins, gd) {
		t.Error("the repository's own session pins a worktree's git folder")
	}
}
