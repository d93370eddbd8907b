package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/gitx/gitxtest"
)

const sid = "s_20260102T150405_a1b2c3"

// repo makes a repository on main with one commit (a.txt, b.bin) and a
// post-checkout hook that would leave ran/hook behind if it ever ran. The
// test's own git goes through gitx too (gitxtest), so it never runs the
// hook either: only a git kin ran another way could.
func repo(t *testing.T) (dir, ran string, git func(args ...string) string) {
	t.Helper()
	base := t.TempDir()
	dir, ran = filepath.Join(base, "repo"), filepath.Join(base, "ran")
	if err := os.MkdirAll(ran, 0o755); err != nil {
		t.Fatal(err)
	}
	gitxtest.Repo(t, dir, map[string]string{"a.txt": "one\ntwo\nthree\n", "b.bin": "\x00\x01\x02binary"})
	hook := filepath.Join(dir, ".git", "hooks", "post-checkout")
	write(t, hook, "#!/bin/sh\ntouch "+filepath.Join(ran, "hook")+"\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	git = func(args ...string) string {
		t.Helper()
		return gitxtest.Git(t, dir, args...)
	}
	return dir, ran, git
}

func write(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func kind(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

func TestCreateApplyRemove(t *testing.T) {
	dir, ran, git := repo(t)
	home := t.TempDir()
	ctx := context.Background()
	plan, err := Check(ctx, filepath.Join(dir), "", sid)
	if err != nil {
		t.Fatal(err)
	}
	info, err := Create(ctx, home, sid, plan)
	if err != nil {
		t.Fatal(err)
	}
	if info.Branch != "kin/a1b2c3" || info.BaseBranch != "main" || info.Path != filepath.Join(home, "worktrees", sid) {
		t.Fatalf("info = %+v", info)
	}
	if b, _ := os.ReadFile(filepath.Join(info.Path, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("worktree not checked out: %q", b)
	}
	if entries, _ := os.ReadDir(ran); len(entries) > 0 {
		t.Error("the repository's post-checkout hook ran")
	}
	// a commit and uncommitted changes, a binary change and a new file
	wgit := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = info.Path
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write(t, filepath.Join(info.Path, "a.txt"), "one\nTWO\nthree\n")
	wgit("commit", "-qam", "two")
	write(t, filepath.Join(info.Path, "b.bin"), "\x00\x01\x03binary changed")
	write(t, filepath.Join(info.Path, "new.txt"), "new\n")
	st, err := StatusOf(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ahead != 1 || st.Behind != 0 || !st.Uncommitted || !st.Unapplied || len(st.Files) != 3 {
		t.Fatalf("status = %+v", st)
	}
	if _, err := Remove(ctx, home, info, false); kind(err) != KindUnapplied {
		t.Fatalf("remove with unapplied changes = %v", err)
	}
	// the original checkout changed a.txt where the worktree did: refused, nothing applied
	write(t, filepath.Join(dir, "a.txt"), "one\nzwei\nthree\n")
	_, err = Apply(ctx, home, info)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindConflict || !slices.Equal(e.Paths, []string{"a.txt"}) {
		t.Fatalf("apply over a conflicting change = %v %+v", err, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err == nil {
		t.Fatal("a refused apply half-applied: new.txt is there")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.bin")); string(b) != "\x00\x01\x02binary" {
		t.Fatal("a refused apply half-applied: b.bin changed")
	}
	git("checkout", "--", "a.txt")
	got, err := Apply(ctx, home, info)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 3 {
		t.Errorf("applied %+v", got)
	}
	for name, want := range map[string]string{"a.txt": "one\nTWO\nthree\n", "b.bin": "\x00\x01\x03binary changed", "new.txt": "new\n"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s in the original = %q, want %q", name, b, want)
		}
	}
	if out := git("diff", "--cached", "--name-only"); out != "" {
		t.Errorf("apply staged %q; it should leave uncommitted changes only", out)
	}
	if out := git("log", "--oneline"); strings.Count(out, "\n") != 1 {
		t.Errorf("apply committed: %q", out)
	}
	info, _ = Load(home, sid)
	if st, _ := StatusOf(ctx, info); st.Unapplied {
		t.Error("still unapplied after apply")
	}
	// a change after the apply is unapplied again
	write(t, filepath.Join(info.Path, "later.txt"), "x\n")
	if _, err := Remove(ctx, home, info, false); kind(err) != KindUnapplied {
		t.Fatalf("remove with a change after the apply = %v", err)
	}
	rm, err := Remove(ctx, home, info, true)
	if err != nil || rm.Branch != "kin/a1b2c3" || rm.Commit == "" {
		t.Fatalf("forced remove = %+v %v", rm, err)
	}
	if _, err := os.Stat(info.Path); !os.IsNotExist(err) {
		t.Error("the worktree folder is still there")
	}
	if out := git("branch", "--list", "kin/*"); out != "" {
		t.Errorf("branch left: %q", out)
	}
	if _, err := Load(home, sid); kind(err) != KindNone {
		t.Errorf("load after remove = %v", err)
	}
	if entries, _ := os.ReadDir(ran); len(entries) > 0 {
		t.Error("the repository's post-checkout hook ran")
	}
}

// A branch name is the name of the branch made, or refused: git's
// check-ref-format --branch expands "@{-1}" (the branch checked out before
// this one) and said it was valid, so Check passed it. worktree add -b then
// failed on the earlier branch's name ("already exists", not a refusal
// saying why) or, that branch being deleted since, made a branch of that
// name while the record said "@{-1}": worktree/remove looked for
// refs/heads/@{-1}, found nothing, and left the branch behind.
func TestCheckRefusesABranchNameGitWouldExpand(t *testing.T) {
	ctx := context.Background()
	dir, _, git := repo(t)
	home := t.TempDir()
	git("checkout", "-q", "-b", "earlier")
	git("checkout", "-q", "main")
	git("branch", "-D", "earlier")
	plan, err := Check(ctx, dir, "@{-1}", sid)
	if kind(err) == KindBadBranch {
		return
	}
	if err != nil {
		t.Fatalf("Check: %v, want a %s refusal", err, KindBadBranch)
	}
	info, err := Create(ctx, home, sid, plan)
	if err != nil {
		t.Fatalf("Check passed @{-1}, and Create failed: %v", err)
	}
	_, _ = Remove(ctx, home, info, true)
	t.Errorf("Check passed @{-1}; the worktree's branch after its removal: %q", strings.TrimSpace(git("branch", "--list", "earlier")))
}

func TestCheckRefusesAndCreatesNothing(t *testing.T) {
	ctx := context.Background()
	dir, _, git := repo(t)
	home := t.TempDir()
	plain := t.TempDir()
	if _, err := Check(ctx, plain, "", sid); kind(err) != KindNotRepository {
		t.Errorf("not a repository: %v", err)
	}
	git("branch", "taken")
	if _, err := Check(ctx, dir, "taken", sid); kind(err) != KindBranchExists {
		t.Errorf("branch taken: %v", err)
	}
	if _, err := Check(ctx, dir, "bad..name", sid); kind(err) != KindBadBranch {
		t.Errorf("bad branch: %v", err)
	}
	if _, err := Check(ctx, dir, "-x", sid); kind(err) != KindBadBranch {
		t.Errorf("option-like branch: %v", err)
	}
	write(t, filepath.Join(dir, "a.txt"), "staged\n")
	git("add", "a.txt")
	if _, err := Check(ctx, dir, "", sid); kind(err) != KindDirtyIndex {
		t.Errorf("dirty index: %v", err)
	}
	git("reset", "-q")
	// unstaged changes are fine: they stay in the original checkout
	if _, err := Check(ctx, dir, "", sid); err != nil {
		t.Errorf("unstaged changes: %v", err)
	}
	git("checkout", "-q", "--detach")
	if _, err := Check(ctx, dir, "", sid); kind(err) != KindDetachedHead {
		t.Errorf("detached head: %v", err)
	}
	empty := t.TempDir()
	cmd := exec.Command("git", "init", "-q", empty)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	if _, err := Check(ctx, empty, "", sid); kind(err) != KindNoCommits {
		t.Errorf("no commits: %v", err)
	}
	if out := git("worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("a worktree was made: %s", out)
	}
	if _, err := os.Stat(Dir(home)); !os.IsNotExist(err) {
		t.Error("the worktrees folder was made")
	}
}

func TestConflictPaths(t *testing.T) {
	err := &gitErr{"error: patch failed: src/a.go:12\nerror: src/a.go: patch does not apply\nerror: new.txt: already exists in working directory\n"}
	got := conflicts(err)
	if !slices.Equal(got, []string{"new.txt", "src/a.go"}) {
		t.Errorf("conflicts = %v", got)
	}
}

type gitErr struct{ s string }

func (e *gitErr) Error() string { return e.s }

// Between Check and Create the branch appeared (another process): Create
// refuses and leaves that branch alone; a folder already at the path is
// refused too.
func TestCreateRefusesWhatAppearedAfterCheck(t *testing.T) {
	dir, _, git := repo(t)
	home := t.TempDir()
	ctx := context.Background()
	plan, err := Check(ctx, dir, "", sid)
	if err != nil {
		t.Fatal(err)
	}
	git("branch", plan.Branch)
	if _, err := Create(ctx, home, sid, plan); kind(err) != KindBranchExists {
		t.Fatalf("create = %v", err)
	}
	if out := git("branch", "--list", plan.Branch); !strings.Contains(out, plan.Branch) {
		t.Error("the other process's branch was deleted")
	}
	git("branch", "-D", plan.Branch)
	if err := os.MkdirAll(PathFor(home, sid), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, home, sid, plan); kind(err) != KindExists {
		t.Fatalf("create over a folder = %v", err)
	}
	if out := git("branch", "--list", "kin/*"); out != "" {
		t.Errorf("a branch was left: %q", out)
	}
}

// A record from before forks shared worktrees (no owner) still loads; a
// shared one loads for the fork and names the owner's folder; one naming
// another folder than its owner's is refused. Sharers finds each session
// from the other; RemoveShared refuses while a user remains, and forced
// marks it, so its status says who took the folder.
func TestShareAndRemoveShared(t *testing.T) {
	_, home, info := created(t)
	ctx := context.Background()
	old := `{"sessionId":"` + sid + `","repo":"` + info.Repo + `","path":"` + info.Path + `","branch":"` + info.Branch + `","base":"` + info.Base + `","baseBranch":"main","created":"2026-01-02T15:04:05Z"}`
	write(t, filepath.Join(home, "worktrees", sid+".json"), old)
	if got, err := Load(home, sid); err != nil || got.OwnerID() != sid || got.Path != info.Path {
		t.Fatalf("an old record: %+v %v", got, err)
	}
	const fork = "s_20260102T150406_d4e5f6"
	shared, err := Share(home, info, fork)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Load(home, fork); err != nil || got.Owner != sid || got.Path != info.Path || got.Branch != info.Branch || got != shared {
		t.Fatalf("the fork's record: %+v %v", got, err)
	}
	const bad = "s_20260102T150407_aaaaaa"
	write(t, filepath.Join(home, "worktrees", bad+".json"), `{"sessionId":"`+bad+`","owner":"s_other","path":"`+info.Path+`"}`)
	if _, err := Load(home, bad); err == nil {
		t.Error("a record naming a folder not its owner's loaded")
	}
	for _, c := range []struct {
		of   Info
		want string
	}{{info, fork}, {shared, sid}} {
		users, err := Sharers(home, c.of)
		if err != nil || len(users) != 1 || users[0].SessionID != c.want {
			t.Fatalf("sharers of %s = %+v %v, want %s", c.of.SessionID, users, err, c.want)
		}
	}
	users, _ := Sharers(home, info)
	_, err = RemoveShared(ctx, home, info, false, users)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindShared || !slices.Equal(e.Sessions, []string{fork}) || !strings.Contains(e.Message, fork) {
		t.Fatalf("remove while shared = %v", err)
	}
	if _, err := os.Stat(info.Path); err != nil {
		t.Fatalf("a refused remove took the folder: %v", err)
	}
	if _, err := RemoveShared(ctx, home, info, true, users); err != nil {
		t.Fatal(err)
	}
	left, err := Load(home, fork)
	if err != nil || left.RemovedBy != sid {
		t.Fatalf("the fork's record after a forced remove: %+v %v", left, err)
	}
	if _, err := StatusOf(ctx, left); kind(err) != KindMissing || !strings.Contains(err.Error(), sid) {
		t.Errorf("the fork's status = %v", err)
	}
	if _, err := Remove(ctx, home, left, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(home, fork); kind(err) != KindNone {
		t.Errorf("after the fork's own remove: %v", err)
	}
}

// created is a worktree made for sid from a new repository (repo, whose
// checkout is dir), under a kin home of its own.
func created(t *testing.T) (dir, home string, info Info) {
	t.Helper()
	dir, _, _ = repo(t)
	home = t.TempDir()
	plan, err := Check(context.Background(), dir, "", sid)
	if err != nil {
		t.Fatal(err)
	}
	if info, err = Create(context.Background(), home, sid, plan); err != nil {
		t.Fatal(err)
	}
	return dir, home, info
}
