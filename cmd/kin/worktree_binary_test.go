package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// wtRepo is a repository on main with one commit and a post-checkout hook
// (and a smudge filter for every file) that would each leave a file in
// ran/ if kin's git ever ran them.
func wtRepo(t *testing.T) (repo, ran string, git func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	base := t.TempDir()
	repo, ran = filepath.Join(base, "repo"), filepath.Join(base, "ran")
	for _, d := range []string{repo, ran} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git = func(args ...string) string {
		t.Helper()
		// the test's own git runs neither hook nor filter: only kin's could
		cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=" + os.DevNull, "-c", "filter.evil.smudge=cat"}, args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	put := func(p, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	put(filepath.Join(repo, "main.go"), "package main\n\nfunc main() {}\n", 0o644)
	put(filepath.Join(repo, "logo.bin"), "\x00\x01\x02logo", 0o644)
	git("add", ".")
	git("commit", "-qm", "first")
	put(filepath.Join(repo, ".git", "hooks", "post-checkout"), "#!/bin/sh\ntouch "+filepath.Join(ran, "post-checkout")+"\n", 0o755)
	put(filepath.Join(repo, ".git", "smudge.sh"), "#!/bin/sh\ntouch "+filepath.Join(ran, "smudge")+"\ncat\n", 0o755)
	git("config", "filter.evil.smudge", filepath.Join(repo, ".git", "smudge.sh"))
	put(filepath.Join(repo, ".git", "info", "attributes"), "* filter=evil\n", 0o644)
	return repo, ran, git
}

func nothingRan(t *testing.T, ran string) {
	t.Helper()
	entries, _ := os.ReadDir(ran)
	for _, e := range entries {
		t.Errorf("the repository's %s ran", e.Name())
	}
}

// wtTurn starts a turn and answers its approvals (allow once) until it
// completes; it returns turn/completed's params.
func wtTurn(t *testing.T, p *proc, id *int, sid, input string) map[string]any {
	t.Helper()
	*id++
	p.send(req(*id, "turn/start", map[string]any{"sessionId": sid, "input": input}))
	for {
		m := p.next()
		params, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "approval/request":
			*id++
			p.send(req(*id, "approval/respond", map[string]any{"requestId": params["requestId"], "decision": "allow_once"}))
		case "turn/completed":
			return params
		}
	}
}

func wtError(t *testing.T, m map[string]any) (string, []string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok || e["code"] != -32020.0 {
		t.Fatalf("want a -32020 error, got %v", m)
	}
	d := e["data"].(map[string]any)
	var paths []string
	for _, p := range asList(d["paths"]) {
		paths = append(paths, p.(string))
	}
	return d["kind"].(string), paths
}

func asList(v any) []any { l, _ := v.([]any); return l }

// The whole way with the built binary and a real repository: a session in
// a worktree, the mock model editing a file there and committing through
// a confined command, status, remove refused, apply refused over a
// conflict (nothing changed), apply, resume in a second kin, remove; the
// repository's hook and filter never run.
func TestWorktreeBinaryWholeWay(t *testing.T) {
	repo, ran, git := wtRepo(t)
	m := modeltest.New()
	defer m.Close()
	home := t.TempDir()
	p := initialized(t, home, m)
	id := 1
	p.send(req(2, "session/new", map[string]any{"cwd": repo, "worktree": true}))
	sess := result(t, p.until(idIs(2)))["session"].(map[string]any)
	sid := sess["sessionId"].(string)
	wt, _ := sess["worktree"].(map[string]any)
	if wt == nil || sess["cwd"] != wt["path"] || wt["path"] != filepath.Join(home, "worktrees", sid) || wt["branch"] != "kin/"+sid[strings.LastIndex(sid, "_")+1:] {
		t.Fatalf("session = %v", sess)
	}
	path := wt["path"].(string)
	nothingRan(t, ran)
	id = 2

	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { println(\"hi\") }"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "bash", Arguments: `{"command":"git -c user.name=k -c user.email=k@example.com commit -qam 'say hi' && git log --oneline | wc -l"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c3", Name: "write_file", Arguments: `{"path":"notes.txt","content":"uncommitted\n"}`}}},
		modeltest.Reply{Text: []string{"done"}})
	if done := wtTurn(t, p, &id, sid, "say hi"); done["status"] != "completed" {
		t.Fatalf("turn: %v", done)
	}
	if b, _ := os.ReadFile(filepath.Join(path, "main.go")); !strings.Contains(string(b), "println") {
		t.Fatalf("the edit is not in the worktree: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "main.go")); strings.Contains(string(b), "println") {
		t.Fatal("the edit reached the original checkout")
	}
	id++
	p.send(req(id, "worktree/status", map[string]any{"sessionId": sid}))
	st := result(t, p.until(idIs(float64(id))))
	if st["ahead"] != 1.0 || st["uncommitted"] != true || st["unapplied"] != true || len(asList(st["files"])) != 2 {
		t.Fatalf("status (the commit made by the confined command must count) = %v", st)
	}

	id++
	p.send(req(id, "worktree/remove", map[string]any{"sessionId": sid}))
	if k, paths := wtError(t, p.until(idIs(float64(id)))); k != "unapplied" || strings.Join(paths, ",") != "main.go,notes.txt" {
		t.Errorf("remove with unapplied changes: %s %v", k, paths)
	}
	// the checkout changed main.go on its own: apply refuses, changes nothing
	if err := os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n\nfunc main() { panic(0) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id++
	p.send(req(id, "worktree/apply", map[string]any{"sessionId": sid}))
	if k, paths := wtError(t, p.until(idIs(float64(id)))); k != "conflict" || strings.Join(paths, ",") != "main.go" {
		t.Errorf("apply over a conflict: %s %v", k, paths)
	}
	if _, err := os.Stat(filepath.Join(repo, "notes.txt")); err == nil {
		t.Error("a refused apply half-applied (notes.txt)")
	}
	git("checkout", "--", "main.go")
	id++
	p.send(req(id, "worktree/apply", map[string]any{"sessionId": sid}))
	if ap := result(t, p.until(idIs(float64(id)))); len(asList(ap["files"])) != 2 {
		t.Errorf("apply = %v", ap)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "main.go")); !strings.Contains(string(b), "println") {
		t.Errorf("main.go after apply: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(repo, "notes.txt")); string(b) != "uncommitted\n" {
		t.Errorf("notes.txt after apply: %q", b)
	}
	if out := git("diff", "--cached", "--name-only"); out != "" {
		t.Errorf("apply staged: %q", out)
	}
	if out := git("rev-parse", "--abbrev-ref", "HEAD"); strings.TrimSpace(out) != "main" || strings.Count(git("log", "--oneline"), "\n") != 1 {
		t.Errorf("apply moved the checkout's branch")
	}

	// a second kin resumes the session in its worktree
	p.stdin.Close()
	p.wait()
	p2 := initialized(t, home, m)
	p2.send(req(2, "session/resume", map[string]any{"sessionId": sid}))
	rs := result(t, p2.until(idIs(2)))["session"].(map[string]any)
	if rs["cwd"] != path || rs["worktree"] == nil {
		t.Errorf("resumed session = %v", rs)
	}
	p2.send(req(3, "worktree/remove", map[string]any{"sessionId": sid}))
	if rm := result(t, p2.until(idIs(3))); rm["branch"] != wt["branch"] || rm["commit"] == nil {
		t.Errorf("remove = %v", rm)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("the worktree folder is still there")
	}
	if out := git("branch", "--list", "kin/*"); out != "" {
		t.Errorf("the branch is still there: %q", out)
	}
	nothingRan(t, ran)
	// the hostile fixture is real: plain git runs its hook and filter
	plain := exec.Command("git", "worktree", "add", "-q", filepath.Join(t.TempDir(), "w"))
	plain.Dir = repo
	plain.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	_ = plain.Run()
	if entries, _ := os.ReadDir(ran); len(entries) < 2 {
		t.Errorf("control: plain git ran %d of the planted programs; the fixture proves nothing", len(entries))
	}
}

// The refusals of session/new with a worktree: each a -32020 of its kind,
// nothing created (no session, no worktree, no branch).
func TestWorktreeBinaryRefusals(t *testing.T) {
	repo, ran, git := wtRepo(t)
	m := modeltest.New()
	defer m.Close()
	home := t.TempDir()
	p := initialized(t, home, m)
	id := 1
	try := func(params map[string]any, want string) {
		t.Helper()
		id++
		p.send(req(id, "session/new", params))
		if k, _ := wtError(t, p.until(idIs(float64(id)))); k != want {
			t.Errorf("%v: %s, want %s", params, k, want)
		}
	}
	try(map[string]any{"cwd": t.TempDir(), "worktree": true}, "notRepository")
	git("branch", "taken")
	try(map[string]any{"cwd": repo, "worktree": map[string]any{"branch": "taken"}}, "branchExists")
	try(map[string]any{"cwd": repo, "worktree": map[string]any{"branch": "no..dots"}}, "badBranch")
	if err := os.WriteFile(filepath.Join(repo, "main.go"), []byte("staged\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "main.go")
	try(map[string]any{"cwd": repo, "worktree": true}, "dirtyIndex")
	git("reset", "-q", "--hard")
	git("checkout", "-q", "--detach")
	try(map[string]any{"cwd": repo, "worktree": true}, "detachedHead")
	id++
	p.send(req(id, "session/list", nil))
	if l := asList(result(t, p.until(idIs(float64(id))))["sessions"]); len(l) != 0 {
		t.Errorf("sessions made: %v", l)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "worktrees")); len(entries) != 0 {
		t.Errorf("worktrees made: %v", entries)
	}
	if out := git("worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("git worktrees: %s", out)
	}
	if out := git("branch", "--list", "kin/*"); out != "" {
		t.Errorf("branches made: %q", out)
	}
	nothingRan(t, ran)
}
