package rpc_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// Words steered into a turn while the model streams a call join at the
// next request, after the call's output, and never cut the running call.
func TestSteerDuringAStreamingTurnReachesTheNextRequest(t *testing.T) {
	e := newEnv(t)
	e.Write("a.txt", "alpha\n")
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Reading", " a.txt"}, Calls: []modeltest.Call{{ID: "r1", Name: "read_file", Arguments: args(map[string]any{"path": "a.txt"})}}, Hold: hold},
		modeltest.Reply{Text: []string{"ok, tests too"}},
	)
	ed, sid := e.editor()
	tid := start(t, ed, sid, "look at a.txt")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid)) // the model is streaming
	var res rpc.TurnSteerResult
	ed.MustCall("turn/steer", map[string]any{"sessionId": sid, "turnId": tid, "input": "also run the tests"}, &res)
	if !res.Queued {
		t.Fatalf("steer %+v", res)
	}
	close(hold)
	done := completed(ed, tid)
	if done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	reqs := e.Model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if strings.Contains(reqs[0].Text(), "also run the tests") {
		t.Error("the first request (already sent) carries the steered words")
	}
	if got := reqs[1].LastUserText(); !strings.Contains(got, "also run the tests") {
		t.Errorf("the next request's last user message is %q", got)
	}
	// The call ran to its end: its output precedes the words.
	in := reqs[1].Input
	out, user := -1, -1
	for i, it := range in {
		if it["type"] == "function_call_output" && strings.Contains(mustJSON(it), "alpha") {
			out = i
		}
		if it["role"] == "user" && strings.Contains(mustJSON(it), "also run the tests") {
			user = i
		}
	}
	if out < 0 || user < out {
		t.Errorf("output at %d, words at %d: %s", out, user, mustJSON(in))
	}
	steered := ed.Wait("turn/steered", rpctest.Field("turnId", tid))
	if steered["input"] != "also run the tests" || steered["sessionId"] != sid {
		t.Errorf("turn/steered %v", steered)
	}
	// History shows the words where they joined: after the call, before
	// the answer they led to.
	h := historyOf(t, ed, sid)
	order := []string{}
	for _, it := range h {
		switch it["type"] {
		case "toolCall", "steer", "assistant":
			order = append(order, it["type"].(string))
		}
	}
	if strings.Join(order, ",") != "assistant,toolCall,steer,assistant" {
		t.Errorf("history order %v", order)
	}
	// An ended turn answers an error saying so.
	code, msg := ed.CallErr("turn/steer", map[string]any{"sessionId": sid, "turnId": tid, "input": "late"})
	if code != rpc.CodeTurnEnded || !strings.Contains(msg, "ended") {
		t.Errorf("steer after the end: %d %q", code, msg)
	}
	if code, _ := ed.CallErr("turn/steer", map[string]any{"sessionId": sid, "turnId": tid}); code != rpc.CodeInvalidParams {
		t.Errorf("steer without input: %d", code)
	}
}

// Words that come while the model streams its final answer are not lost:
// the turn makes one more request that carries them.
func TestSteerDuringTheFinalAnswerKeepsTheTurnGoing(t *testing.T) {
	e := newEnv(t)
	steerTheFinalAnswer(t, e, "in French please")
	reqs := e.Model.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "in French please") {
		t.Fatalf("%d requests", len(reqs))
	}
}

// steerTheFinalAnswer steers words into a turn while its final answer
// streams (a second answer is scripted, should the words make the turn go
// on) and returns once the turn completed.
func steerTheFinalAnswer(t *testing.T, e *env, words string) {
	t.Helper()
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Here", " is all"}, Hold: hold},
		modeltest.Reply{Text: []string{"and in French"}},
	)
	ed, sid := e.editor()
	tid := start(t, ed, sid, "explain")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	ed.MustCall("turn/steer", rpc.TurnSteerParams{SessionID: sid, TurnID: tid, Input: words}, nil)
	close(hold)
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
}

// A rollback of a turn that edited two files puts both back, takes the
// turn out of what the model sees (the log keeps it, marked), and says so.
func TestRollbackUndoesATurnThatEditedTwoFiles(t *testing.T) {
	e := newEnv(t)
	a, b := e.Write("a.txt", "a1\n"), e.Write("b.txt", "b1\n")
	e.Model.Script(
		modeltest.Reply{Text: []string{"hello"}},
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "e1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "a2\n"})},
			{ID: "e2", Name: "edit_file", Arguments: args(map[string]any{"path": "b.txt", "old_string": "b1", "new_string": "b2"})},
		}},
		modeltest.Reply{Text: []string{"changed"}},
		modeltest.Reply{Text: []string{"again"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	t1 := start(t, ed, sid, "say hello")
	completed(ed, t1)
	t2 := start(t, ed, sid, "change both files")
	completed(ed, t2)

	var rb rpc.TurnRollbackResult
	ed.MustCall("turn/rollback", rpc.TurnRollbackParams{SessionID: sid, Turns: 1}, &rb)
	if len(rb.Turns) != 1 || rb.Turns[0] != t2 {
		t.Fatalf("rollback %+v", rb)
	}
	if len(rb.Undos) != 1 || rb.Undos[0].TurnID != t2 || strings.Join(rb.Undos[0].Restored, ",") != a+","+b || len(rb.Undos[0].Conflicts) != 0 {
		t.Errorf("undos %+v", rb.Undos)
	}
	for p, want := range map[string]string{a: "a1\n", b: "b1\n"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s is %q, want %q", filepath.Base(p), got, want)
		}
	}
	// turn/undo agrees: nothing of that turn is left to undo.
	if code, _ := ed.CallErr("turn/undo", map[string]any{"sessionId": sid}); code != rpc.CodeNotFound {
		t.Errorf("undo after rollback: %d", code)
	}
	t3 := start(t, ed, sid, "what now")
	completed(ed, t3)
	reqs := e.Model.Requests()
	last := reqs[len(reqs)-1].Text()
	if strings.Contains(last, "change both files") || strings.Contains(last, "a2") || !strings.Contains(last, "say hello") {
		t.Errorf("the request after the rollback: %s", last)
	}
	h := historyOf(t, ed, sid)
	rbs := itemsOf(h, "rollback")
	if len(rbs) != 1 {
		t.Fatalf("rollback items %v", rbs)
	}
	for _, it := range h {
		marked := it["rolledBack"] == true
		if it["turnId"] == t2 && !marked || it["turnId"] != t2 && marked {
			t.Errorf("item %v marked %v", it, marked)
		}
	}
	// The log keeps the turn: after a restart history still has it.
	ed = restart(t, e, ed)
	h = historyOf(t, ed, sid)
	if n := len(itemsOf(h, "user")); n != 3 {
		t.Errorf("%d questions after a restart", n)
	}
	// A later kin rebuilds the conversation from the log: still without it.
	e.Model.Script(modeltest.Reply{Text: []string{"after the restart"}})
	t4 := start(t, ed, sid, "and after a restart")
	completed(ed, t4)
	reqs = e.Model.Requests()
	if last := reqs[len(reqs)-1].Text(); strings.Contains(last, "change both files") || !strings.Contains(last, "what now") {
		t.Errorf("the request after a restart: %s", last)
	}
	// More turns than there are: refused, nothing done.
	if code, msg := ed.CallErr("turn/rollback", rpc.TurnRollbackParams{SessionID: sid, Turns: 5}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "3 turn") {
		t.Errorf("rollback of 5: %d %q", code, msg)
	}
}

// A file changed since the turn is left as it is and reported, as
// turn/undo does; the model is told which.
func TestRollbackReportsAConflictAndLeavesTheFile(t *testing.T) {
	e := newEnv(t)
	a, b := e.Write("a.txt", "a1\n"), e.Write("b.txt", "b1\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "e1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "a2\n"})},
			{ID: "e2", Name: "write_file", Arguments: args(map[string]any{"path": "b.txt", "content": "b2\n"})},
			{ID: "x1", Name: "bash", Arguments: args(map[string]any{"command": "true"})},
		}},
		modeltest.Reply{Text: []string{"done"}},
		modeltest.Reply{Text: []string{"next"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, "edit")
	completed(ed, tid)
	if err := os.WriteFile(b, []byte("b2\nmine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rb rpc.TurnRollbackResult
	ed.MustCall("turn/rollback", rpc.TurnRollbackParams{SessionID: sid, Turns: 1}, &rb)
	if len(rb.Undos) != 1 {
		t.Fatalf("rollback %+v", rb)
	}
	u := rb.Undos[0]
	if strings.Join(u.Restored, ",") != a || len(u.Conflicts) != 1 || u.Conflicts[0].Path != b || !strings.Contains(u.Conflicts[0].Diff, "+mine") {
		t.Errorf("undo %+v", u)
	}
	if len(u.NotUndoable) != 1 || u.NotUndoable[0].CallID != "x1" {
		t.Errorf("not undoable %+v", u.NotUndoable)
	}
	if got, _ := os.ReadFile(b); string(got) != "b2\nmine\n" {
		t.Errorf("b.txt is %q", got)
	}
	t2 := start(t, ed, sid, "go on")
	completed(ed, t2)
	reqs := e.Model.Requests()
	last := reqs[len(reqs)-1].Text()
	if !strings.Contains(last, "left as they are: "+b) || strings.Contains(last, `"edit"`) {
		t.Errorf("the model is not told of the conflict: %s", last)
	}
}

// A rollback while a turn runs is refused (busy), as turn/undo is.
func TestRollbackRefusedWhileATurnRuns(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	e.Model.Script(modeltest.Reply{Text: []string{"slow"}, Hold: hold})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "wait")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	if code, _ := ed.CallErr("turn/rollback", rpc.TurnRollbackParams{SessionID: sid, Turns: 1}); code != rpc.CodeBusy {
		t.Errorf("rollback while running: %d", code)
	}
	close(hold)
	completed(ed, tid)
}

// A fork takes the history up to the turn named, with the original's
// model, mode and roots; the two then go their own ways.
func TestForkThenDiverge(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Text: []string{"one"}},
		modeltest.Reply{Text: []string{"two"}},
		modeltest.Reply{Text: []string{"fork answer"}},
		modeltest.Reply{Text: []string{"original answer"}},
	)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	var orig rpc.SessionResult
	ed.MustCall("session/new", map[string]any{"mode": "auto-edit"}, &orig)
	sid := orig.Session.SessionID
	t1 := start(t, ed, sid, "first question")
	completed(ed, t1)
	t2 := start(t, ed, sid, "second question")
	completed(ed, t2)
	before := historyOf(t, ed, sid)

	var f rpc.SessionForkResult
	ed.MustCall("session/fork", rpc.SessionForkParams{SessionID: sid, TurnID: t1}, &f)
	fid := f.Session.SessionID
	if fid == "" || fid == sid || f.ForkedFrom.SessionID != sid || f.ForkedFrom.TurnID != t1 {
		t.Fatalf("fork %+v", f)
	}
	if f.Model != orig.Model || f.Session.Cwd != e.WS || f.Session.Mode != "auto-edit" || f.Session.Turns != 1 {
		t.Errorf("fork's session %+v (original %v)", f, orig)
	}
	fh := historyOf(t, ed, fid)
	if qs := itemsOf(fh, "user"); len(qs) != 1 || qs[0]["text"] != "first question" {
		t.Errorf("fork's questions %v", qs)
	}
	if forks := itemsOf(fh, "fork"); len(forks) != 1 {
		t.Errorf("fork items %v", forks)
	}
	ft := start(t, ed, fid, "fork goes left")
	completed(ed, ft)
	ot := start(t, ed, sid, "original goes right")
	completed(ed, ot)
	reqs := e.Model.Requests()
	fr, or := reqs[2].Text(), reqs[3].Text()
	if !strings.Contains(fr, "first question") || strings.Contains(fr, "second question") || !strings.Contains(fr, "fork goes left") {
		t.Errorf("the fork's request: %s", fr)
	}
	if !strings.Contains(or, "second question") || strings.Contains(or, "fork goes left") {
		t.Errorf("the original's request: %s", or)
	}
	// The original's history is what it was, and then its own turn.
	after := historyOf(t, ed, sid)
	if mustJSON(after[:len(before)]) != mustJSON(before) {
		t.Errorf("the original changed:\n%s\n%s", mustJSON(before), mustJSON(after[:len(before)]))
	}
	// Rolling back in the fork: its own turn's files would be undone, the
	// copied turn's are the original's and are left, saying so.
	var frb rpc.TurnRollbackResult
	ed.MustCall("turn/rollback", rpc.TurnRollbackParams{SessionID: fid, Turns: 2}, &frb)
	if len(frb.Turns) != 2 || frb.Turns[0] != ft || frb.Turns[1] != t1 || len(frb.Errors) != 1 || frb.Errors[0].TurnID != t1 ||
		!strings.Contains(frb.Errors[0].Error, "copied by a fork from session "+sid) {
		t.Errorf("rollback in the fork %+v", frb)
	}
	// Fork of everything; then bad params.
	var all rpc.SessionForkResult
	ed.MustCall("session/fork", rpc.SessionForkParams{SessionID: sid}, &all)
	if n := len(itemsOf(historyOf(t, ed, all.Session.SessionID), "user")); n != 3 {
		t.Errorf("a fork of all has %d questions", n)
	}
	if code, _ := ed.CallErr("session/fork", rpc.SessionForkParams{SessionID: sid, TurnID: "t_nope"}); code != rpc.CodeInvalidParams {
		t.Errorf("fork at no turn: %d", code)
	}
	if code, _ := ed.CallErr("session/fork", rpc.SessionForkParams{SessionID: "s_nope"}); code != rpc.CodeSessionNotFound {
		t.Errorf("fork of no session: %d", code)
	}
}

// A fork made while a turn runs takes the turns that ended, never the
// running one; naming the running turn is refused.
func TestForkWhileATurnRunsTakesOnlyEndedTurns(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"done"}},
		modeltest.Reply{Text: []string{"still going"}, Hold: hold},
	)
	ed, sid := e.editor()
	t1 := start(t, ed, sid, "ended question")
	completed(ed, t1)
	t2 := start(t, ed, sid, "running question")
	ed.Wait("turn/delta", rpctest.Field("turnId", t2))
	var f rpc.SessionForkResult
	ed.MustCall("session/fork", rpc.SessionForkParams{SessionID: sid}, &f)
	if code, _ := ed.CallErr("session/fork", rpc.SessionForkParams{SessionID: sid, TurnID: t2}); code != rpc.CodeInvalidParams {
		t.Errorf("fork at the running turn: %d", code)
	}
	close(hold)
	completed(ed, t2)
	h := historyOf(t, ed, f.Session.SessionID)
	for _, it := range h {
		if it["turnId"] == t2 {
			t.Errorf("the fork holds the running turn's %v", it)
		}
	}
	if qs := itemsOf(h, "user"); len(qs) != 1 || qs[0]["text"] != "ended question" {
		t.Errorf("the fork's questions %v", qs)
	}
}
