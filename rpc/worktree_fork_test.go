package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// worktreeRefusal is a -32020's message and data.
func worktreeRefusal(t *testing.T, err error) (string, rpc.WorktreeErrorData) {
	t.Helper()
	re, ok := err.(*jsonrpc2.Error)
	if !ok || re.Code != rpc.CodeWorktree || re.Data == nil {
		t.Fatalf("want a -32020 error, got %v", err)
	}
	var d rpc.WorktreeErrorData
	if err := json.Unmarshal(*re.Data, &d); err != nil {
		t.Fatal(err)
	}
	return re.Message, d
}

// A fork of a worktree session works in the same worktree: its session
// object names it, its edit lands there, status answers the same from
// either session and an apply from one counts for both. Removing it is
// refused from either session while the other exists, naming it; forced
// from the original, the fork's status and its next turn say the worktree
// was removed and by whom, and its own remove clears its record.
func TestWorktreeFork(t *testing.T) {
	e, ed, f, sid, wt := forkedWorktree(t)
	fid := f.Session.SessionID
	if fid == sid || f.Session.Worktree == nil || *f.Session.Worktree != *wt || f.Session.Cwd != wt.Path {
		t.Fatalf("fork = %+v worktree %+v, want the original's worktree %+v", f.Session, f.Session.Worktree, wt)
	}
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "write_file", Arguments: `{"path":"fork.go","content":"package main // fork\n"}`}}},
		modeltest.Reply{Text: []string{"done"}})
	completed(ed, start(t, ed, fid, "add fork.go"))
	if b, _ := os.ReadFile(filepath.Join(wt.Path, "fork.go")); string(b) != "package main // fork\n" {
		t.Fatalf("the fork's write did not land in the shared worktree: %q", b)
	}
	status := func(id string) rpc.WorktreeStatusResult {
		t.Helper()
		var st rpc.WorktreeStatusResult
		ed.MustCall(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: id}, &st)
		return st
	}
	orig, fork := status(sid), status(fid)
	if !reflect.DeepEqual(orig, fork) || !orig.Unapplied || len(orig.Files) != 1 || orig.Files[0].Path != "fork.go" || orig.Path != wt.Path {
		t.Fatalf("status from the original %+v, from the fork %+v", orig, fork)
	}
	ed.MustCall(rpc.MethodWorktreeApply, rpc.SessionIDParams{SessionID: fid}, nil)
	if b, _ := os.ReadFile(filepath.Join(e.WS, "fork.go")); string(b) != "package main // fork\n" {
		t.Fatalf("the fork's apply did not reach the checkout: %q", b)
	}
	if orig, fork := status(sid), status(fid); orig.Unapplied || !reflect.DeepEqual(orig, fork) {
		t.Fatalf("after the fork's apply: original %+v, fork %+v", orig, fork)
	}
	for _, c := range []struct{ from, other string }{{sid, fid}, {fid, sid}} {
		err := ed.Call(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: c.from}, nil)
		msg, d := worktreeRefusal(t, err)
		if d.Kind != "shared" || !reflect.DeepEqual(d.Sessions, []string{c.other}) || !strings.Contains(msg, c.other) {
			t.Fatalf("remove from %s = %q %+v, want shared naming %s", c.from, msg, d, c.other)
		}
	}
	if _, err := os.Stat(filepath.Join(wt.Path, "fork.go")); err != nil {
		t.Fatalf("a refused remove took the folder: %v", err)
	}
	var rm rpc.WorktreeRemoveResult
	ed.MustCall(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: sid, Force: true}, &rm)
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) || rm.Branch != wt.Branch {
		t.Fatalf("forced remove = %+v, folder: %v", rm, err)
	}
	err := ed.Call(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: fid}, nil)
	if msg, d := worktreeRefusal(t, err); d.Kind != "missing" || !strings.Contains(msg, "gone") || !strings.Contains(msg, sid) {
		t.Fatalf("the fork's status after the original removed the worktree = %q %+v", msg, d)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"still here"}})
	completed(ed, start(t, ed, fid, "go on"))
	n := ed.Wait("notice", rpctest.Field("source", "worktree"))
	if n["sessionId"] != fid || n["level"] != "warning" || !strings.Contains(n["message"].(string), "gone") || !strings.Contains(n["message"].(string), sid) {
		t.Errorf("the fork's next turn was not told the worktree is gone: %v", n)
	}
	ed.MustCall(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: fid}, nil)
	err = ed.Call(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: fid}, nil)
	if _, d := worktreeRefusal(t, err); d.Kind != "noWorktree" {
		t.Errorf("the fork's status after its own remove = %+v", d)
	}
}

// Deleting a session that shares its worktree takes only its record: the
// folder stays for the other session, which can then remove it alone.
func TestWorktreeForkDelete(t *testing.T) {
	e, ed, f, sid, wt := forkedWorktree(t)
	fid := f.Session.SessionID
	ed.MustCall("session/delete", rpc.SessionIDParams{SessionID: sid}, nil)
	if _, err := os.Stat(filepath.Join(wt.Path, "main.go")); err != nil {
		t.Fatalf("deleting the original took the folder its fork works in: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.Home, "worktrees", sid+".json")); !os.IsNotExist(err) {
		t.Errorf("the deleted session's worktree record is still there: %v", err)
	}
	var st rpc.WorktreeStatusResult
	ed.MustCall(rpc.MethodWorktreeStatus, rpc.SessionIDParams{SessionID: fid}, &st)
	if st.Path != wt.Path || st.Branch != wt.Branch {
		t.Fatalf("the fork's status after the original was deleted = %+v", st)
	}
	ed.MustCall(rpc.MethodWorktreeRemove, rpc.WorktreeRemoveParams{SessionID: fid}, nil)
	if _, err := os.Stat(wt.Path); !os.IsNotExist(err) {
		t.Errorf("the fork, alone in the worktree now, did not remove it: %v", err)
	}
}

// forkedWorktree is a repository with one commit, a session in a worktree
// of it and a fork of that session.
func forkedWorktree(t *testing.T) (e *env, ed *rpctest.Editor, f rpc.SessionForkResult, sid string, wt *rpc.WorktreeInfo) {
	e = newEnv(t)
	git := gitRepo(t, e.WS)
	e.put("main.go", "package main\n")
	git("add", ".")
	git("commit", "-qm", "first")
	ed = e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Worktree: &rpc.WorktreeParam{Want: &rpc.WorktreeRequest{}}}, &s)
	ed.MustCall(rpc.MethodSessionFork, rpc.SessionForkParams{SessionID: s.Session.SessionID}, &f)
	return e, ed, f, s.Session.SessionID, s.Session.Worktree
}
