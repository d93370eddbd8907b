package rpc_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// gitRepo makes e.WS a repository on main with one commit, at a fixed
// date so its hash is the same in every run (the golden frames show it).
func gitRepo(t *testing.T, dir string) func(args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=Ana", "GIT_AUTHOR_EMAIL=ana@example.com", "GIT_COMMITTER_NAME=Ana", "GIT_COMMITTER_EMAIL=ana@example.com",
			"GIT_AUTHOR_DATE=2026-11-30T23:00:00Z", "GIT_COMMITTER_DATE=2026-11-30T23:00:00Z")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	return git
}

func worktreeKind(t *testing.T, err error) (string, []string) {
	t.Helper()
	var re *jsonrpc2.Error
	if e, ok := err.(*jsonrpc2.Error); ok {
		re = e
	}
	if re == nil || re.Code != rpc.CodeWorktree || re.Data == nil {
		t.Fatalf("want a -32020 error, got %v", err)
	}
	var d rpc.WorktreeErrorData
	if err := json.Unmarshal(*re.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.Kind, d.Paths
}

// A session in a worktree: the model's edit lands in the worktree, not
// the checkout; status shows it; apply refuses a conflicting checkout with
// the path and changes nothing, then applies; remove refuses unapplied
// changes until forced; the errors of session/new create nothing.
func TestWorktreeSession(t *testing.T) {
	e := newEnv(t)
	git := gitRepo(t, e.WS)
	e.put("main.go", "package main\n\nfunc main() {}\n")
	git("add", ".")
	git("commit", "-qm", "first")
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Worktree: &rpc.WorktreeParam{Want: &rpc.WorktreeRequest{}}}, &s)
	wt := s.Session.Worktree
	if wt == nil || s.Session.Cwd != wt.Path || !strings.HasPrefix(wt.Path, filepath.Join(e.Home, "worktrees")) || !strings.HasPrefix(wt.Branch, "kin/") || wt.BaseBranch != "main" {
		t.Fatalf("session = %+v worktree %+v", s.Session, wt)
	}
	sid := s.Session.SessionID
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"func main() {}","new_string":"func main() { println(1) }"}`}}},
		modeltest.Reply{Text: []string{"done"}})
	completed(ed, start(t, ed, sid, "print 1"))
	if b, _ := os.ReadFile(filepath.Join(wt.Path, "main.go")); !strings.Contains(string(b), "println(1)") {
		t.Fatalf("the edit did not land in the worktree: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.WS, "main.go")); strings.Contains(string(b), "println") {
		t.Fatal("the edit landed in the original checkout")
	}
	var st rpc.WorktreeStatusResult
	ed.MustCall(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: sid}, &st)
	if !st.Unapplied || !st.Uncommitted || len(st.Files) != 1 || st.Files[0].Path != "main.go" {
		t.Fatalf("status = %+v", st)
	}
	err := ed.Call(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: sid}, nil)
	if k, paths := worktreeKind(t, err); k != "unapplied" || len(paths) != 1 {
		t.Fatalf("remove = %s %v", k, paths)
	}
	e.put("main.go", "package main\n\nfunc main() { println(2) }\n")
	err = ed.Call(rpc.MethodWorktreeApply, rpc.SessionIDParams{SessionID: sid}, nil)
	if k, paths := worktreeKind(t, err); k != "conflict" || len(paths) != 1 || paths[0] != "main.go" {
		t.Fatalf("apply over a conflict = %s %v", k, paths)
	}
	git("checkout", "--", "main.go")
	var ap rpc.WorktreeApplyResult
	ed.MustCall(rpc.MethodWorktreeApply, rpc.SessionIDParams{SessionID: sid}, &ap)
	if b, _ := os.ReadFile(filepath.Join(e.WS, "main.go")); !strings.Contains(string(b), "println(1)") || len(ap.Files) != 1 {
		t.Fatalf("after apply: %q %+v", b, ap)
	}
	var rm rpc.WorktreeRemoveResult
	ed.MustCall(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: sid}, &rm)
	if rm.Branch != wt.Branch || rm.Commit == "" {
		t.Errorf("remove = %+v", rm)
	}
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Error("the worktree is still there")
	}
	err = ed.Call(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: sid}, nil)
	if k, _ := worktreeKind(t, err); k != "noWorktree" {
		t.Errorf("status after remove = %s", k)
	}
	if code, _ := ed.CallErr(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: "s_1_nope"}); code != rpc.CodeSessionNotFound {
		t.Errorf("an unknown session = %d", code)
	}
	// errors of session/new: nothing made
	git("branch", "taken")
	err = ed.Call("session/new", json.RawMessage(`{"worktree":{"branch":"taken"}}`), nil)
	if k, _ := worktreeKind(t, err); k != "branchExists" {
		t.Errorf("a branch taken = %s", k)
	}
	plain := t.TempDir()
	err = ed.Call("session/new", json.RawMessage(`{"cwd":"`+plain+`","worktree":true}`), nil)
	if k, _ := worktreeKind(t, err); k != "notRepository" {
		t.Errorf("not a repository = %s", k)
	}
	if code, _ := ed.CallErr("session/new", json.RawMessage(`{"worktree":"yes"}`)); code != rpc.CodeInvalidParams {
		t.Errorf("worktree \"yes\" = %d", code)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.Home, "worktrees")); len(entries) != 0 {
		t.Errorf("left in worktrees/: %v", entries)
	}
	var list rpc.SessionListResult
	ed.MustCall("session/list", nil, &list)
	if len(list.Sessions) != 1 {
		t.Errorf("sessions = %d, want the one worktree session only", len(list.Sessions))
	}
}

// goldenWorktree records session/new with a worktree, worktree/status,
// worktree/apply (a conflict, then applied) and worktree/remove.
func goldenWorktree(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	git := gitRepo(t, e.WS)
	e.put("store.go", "package store\n\nfunc Save() error { return nil }\n")
	git("add", ".")
	git("commit", "-qm", "first")
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "atomic saves", Worktree: &rpc.WorktreeParam{Want: &rpc.WorktreeRequest{}}}, &s)
	sid, wt := s.Session.SessionID, s.Session.Worktree
	if err := os.WriteFile(filepath.Join(wt.Path, "store.go"), []byte("package store\n\nfunc Save() error { return atomic() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt.Path, "atomic.go"), []byte("package store\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed.MustCall(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: sid}, nil)
	_ = ed.Call(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: sid}, nil)
	e.put("store.go", "package store\n\nfunc Save() error { return errors.New(\"no\") }\n")
	_ = ed.Call(rpc.MethodWorktreeApply, rpc.SessionIDParams{SessionID: sid}, nil)
	git("checkout", "--", "store.go")
	ed.MustCall(rpc.MethodWorktreeApply, rpc.SessionIDParams{SessionID: sid}, nil)
	ed.MustCall(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: sid}, nil)
	short := strings.TrimPrefix(wt.Branch, "kin/")
	z.fixed = append(z.fixed, "kin/"+short, "kin/9e41c7")
	z.pin(0, sid, "s_20261130T231900_9e41c7")
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		switch method {
		case "session/new":
			p, _ := m["params"].(map[string]any)
			return p == nil || p["worktree"] != nil
		case rpc.MethodWorktreeStatus, rpc.MethodWorktreeApply, rpc.MethodWorktreeRemove:
			return true
		}
		return false
	})
}

// The worktree is the session's root for instructions and undo too: the
// repository's AGENTS.md is read from the worktree, and turn/undo puts
// the worktree's file back, never touching the checkout.
func TestWorktreeInstructionsAndUndo(t *testing.T) {
	e := newEnv(t)
	git := gitRepo(t, e.WS)
	e.put("AGENTS.md", "Run the tests.\n")
	e.put("main.go", "package main\n")
	git("add", ".")
	git("commit", "-qm", "first")
	e.put("main.go", "package main // the person's own edit\n")
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Worktree: &rpc.WorktreeParam{Want: &rpc.WorktreeRequest{}}}, &s)
	wt := s.Session.Worktree.Path
	sid := s.Session.SessionID
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == rpc.KindProjectTrust {
			return "trust"
		}
		return "allow_once"
	})
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "write_file", Arguments: `{"path":"main.go","content":"package main // kin\n"}`}}},
		modeltest.Reply{Text: []string{"done"}})
	tid := start(t, ed, sid, "mark it")
	completed(ed, tid)
	if b, _ := os.ReadFile(filepath.Join(wt, "main.go")); string(b) != "package main // kin\n" {
		t.Fatalf("worktree main.go = %q", b)
	}
	req, _ := json.Marshal(e.Model.Requests()[0])
	if !strings.Contains(string(req), "Run the tests.") || !strings.Contains(string(req), filepath.Join(wt, "AGENTS.md")) || strings.Contains(string(req), filepath.Join(e.WS, "AGENTS.md")) {
		t.Errorf("the model was not given the worktree's AGENTS.md: %s", req)
	}
	ed.MustCall("turn/undo", rpc.TurnUndoParams{SessionID: sid, TurnID: tid}, nil)
	if b, _ := os.ReadFile(filepath.Join(wt, "main.go")); string(b) != "package main\n" {
		t.Errorf("after undo, worktree main.go = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.WS, "main.go")); string(b) != "package main // the person's own edit\n" {
		t.Errorf("the checkout's main.go changed: %q", b)
	}
}
