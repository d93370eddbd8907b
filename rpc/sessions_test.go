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

// Two editors on one session (two connections of one kin here; two kin
// processes in cmd/kin): the second gets the history read-only, may not
// start a turn, and leaves the first one's call alone.
func TestASecondEditorGetsTheSessionReadOnly(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}},
		modeltest.Reply{Text: []string{"written"}},
	)
	ed1, sid := e.editor()
	tid := start(t, ed1, sid, "write a.txt")
	req := ed1.Wait("approval/request", rpctest.Field("callId", "c1"))

	ed2 := rpctest.Start(t, e.Options())
	ed2.Initialize(e.WS)
	var res rpc.SessionResumeResult
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if !res.ReadOnly || !strings.Contains(res.ReadOnlyReason, "open in another kin") || res.RunningTurnID != "" {
		t.Errorf("second resume: readOnly %v %q running %q", res.ReadOnly, res.ReadOnlyReason, res.RunningTurnID)
	}
	if len(res.History) != 2 || res.History[1].Type != "toolCall" || res.History[1].Status != "pending" {
		t.Errorf("second editor's history: %+v", res.History)
	}
	code, msg := ed2.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "me too"})
	if code != rpc.CodeBusy || !strings.Contains(msg, "open in another kin") {
		t.Errorf("second turn/start: %d %q", code, msg)
	}
	if code, _ := ed2.CallErr("session/delete", rpc.SessionIDParams{SessionID: sid}); code != rpc.CodeBusy {
		t.Errorf("second session/delete: %d", code)
	}

	// The first editor's call was not closed by the second opener: it runs
	// once allowed, and ends with exactly one result.
	ed1.MustCall("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: "allow_once"}, nil)
	if done := completed(ed1, tid); done["status"] != "completed" {
		t.Fatalf("first turn: %v", done)
	}
	b, _ := os.ReadFile(filepath.Join(e.Home, "sessions", sid+".jsonl"))
	if n := strings.Count(string(b), `"type":"toolResult"`); n != 1 || strings.Contains(string(b), "kin stopped") {
		t.Errorf("the log has %d results:\n%s", n, b)
	}

	// Once the first editor is gone, the second one owns the session.
	ed1.Conn.Close()
	<-ed1.Done
	e.Model.Script(modeltest.Reply{Text: []string{"mine now"}})
	res = rpc.SessionResumeResult{}
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if res.ReadOnly {
		t.Errorf("still read-only after the owner left: %q", res.ReadOnlyReason)
	}
	if done := completed(ed2, start(t, ed2, sid, "and now?")); done["status"] != "completed" {
		t.Errorf("second editor's turn: %v", done)
	}
}

// A reloaded editor learns that a turn is running, with what streamed so
// far, and can stop it.
func TestResumeTellsTheRunningTurn(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(modeltest.Reply{Text: []string{"streamed ", "never"}, Hold: hold})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "long answer")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if res.RunningTurnID != tid || res.ReadOnly {
		t.Fatalf("running %q (want %q), readOnly %v", res.RunningTurnID, tid, res.ReadOnly)
	}
	if last := res.History[len(res.History)-1]; last.Type != "assistant" || last.Text != "streamed " {
		t.Errorf("history does not show what streamed: %+v", res.History)
	}
	var c rpc.TurnCancelResult
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, &c)
	if !c.Cancelled {
		t.Fatal("turn/cancel found nothing to stop")
	}
	completed(ed, tid)
	res = rpc.SessionResumeResult{}
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if res.RunningTurnID != "" {
		t.Errorf("a finished turn is still running: %q", res.RunningTurnID)
	}
}

func TestResumePagesNewestFirst(t *testing.T) {
	e := newEnv(t)
	ed, sid := e.editor()
	for _, q := range []string{"one", "two", "three"} {
		e.Model.Script(modeltest.Reply{Text: []string{"re " + q}})
		completed(ed, start(t, ed, sid, q))
	}
	var texts []string
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionResumeParams{SessionID: sid, Limit: 4}, &res)
	for {
		var page []string
		for _, h := range res.History {
			page = append(page, h.Type+":"+h.Text)
		}
		texts = append(texts, strings.Join(page, " "))
		if res.Cursor == "" {
			break
		}
		before := res.Cursor
		res = rpc.SessionResumeResult{}
		ed.MustCall("session/resume", rpc.SessionResumeParams{SessionID: sid, Limit: 4, Before: before}, &res)
	}
	// Pages come newest first; a page is oldest first.
	want := []string{"turn: user:three assistant:re three turn:", "assistant:re one turn: user:two assistant:re two", "user:one"}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("pages\n got %q\nwant %q", texts, want)
	}
	if code, _ := ed.CallErr("session/resume", rpc.SessionResumeParams{SessionID: sid, Before: "x"}); code != rpc.CodeInvalidParams {
		t.Errorf("a bad cursor: %d", code)
	}
	if code, _ := ed.CallErr("session/resume", map[string]any{"sessionId": sid, "limit": -1}); code != rpc.CodeInvalidParams {
		t.Errorf("a negative limit: %d", code)
	}
}

// Roots belong to the session: given at session/new, kept in its log, used
// by its tools after a restart whatever folders the new connection has.
func TestSessionRootsComeFromTheSession(t *testing.T) {
	e := newEnv(t)
	other, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(other, "a.txt"), []byte("from the session's folder\n"), 0o600)
	e.Write("a.txt", "from the connection's folder\n")
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Cwd: other}, &s)
	sid := s.Session.SessionID
	if s.Session.Cwd != other {
		t.Errorf("session/new cwd %q", s.Session.Cwd)
	}
	var dflt rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &dflt)
	if dflt.Session.Cwd != e.WS {
		t.Errorf("default cwd %q, want the workspace %q", dflt.Session.Cwd, e.WS)
	}
	for _, bad := range []rpc.SessionNewParams{{Cwd: "relative/dir"}, {Cwd: filepath.Join(other, "missing")}, {AdditionalDirectories: []string{other}}} {
		if code, msg := ed.CallErr("session/new", bad); code != rpc.CodeInvalidParams {
			t.Errorf("session/new %+v: %d %q", bad, code, msg)
		}
	}
	ed.Conn.Close()
	<-ed.Done

	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: args(map[string]any{"path": "a.txt"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	ed2 := rpctest.Start(t, e.Options())
	ed2.Initialize(e.WS)
	var list rpc.SessionListResult
	ed2.MustCall("session/list", nil, &list)
	cwds := map[string]string{}
	for _, i := range list.Sessions {
		cwds[i.SessionID] = i.Cwd
	}
	if cwds[sid] != other || cwds[dflt.Session.SessionID] != e.WS {
		t.Errorf("list cwds %v", cwds)
	}
	completed(ed2, start(t, ed2, sid, "read a.txt"))
	out := ed2.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "completed")))
	if !strings.Contains(out["output"].(string), "from the session's folder") {
		t.Errorf("read_file read %q", out["output"])
	}
	if instr := e.Model.Requests()[0].Instructions; !strings.Contains(instr, other) {
		t.Errorf("instructions name the wrong workspace: %q", instr)
	}
}

// kin accepts frames up to 32 MiB, so a prompt, a title or an answer can be
// longer than a log line kin could once read back: they are cut with a
// marker, and the session stays listed and resumable.
func TestHugeQuestionTitleAndAnswerKeepTheSessionReadable(t *testing.T) {
	// Over the 16 MiB line kin once could not read back; under the race
	// detector (where JSON of that size is too slow) only over the caps.
	question, title, piece := 17<<20, 1<<20, 2<<20
	if raceEnabled {
		question, title, piece = 2<<20+4096, 4096, 1<<20+4096
	}
	e := newEnv(t)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: strings.Repeat("t", title)}, &s)
	sid := s.Session.SessionID
	e.Model.Script(modeltest.Reply{Text: []string{strings.Repeat("a", piece), strings.Repeat("b", piece)}})
	tid := start(t, ed, sid, strings.Repeat("q", question))
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn: %v", done)
	}
	ed.Conn.Close()
	<-ed.Done

	ed2 := rpctest.Start(t, e.Options())
	ed2.Initialize(e.WS)
	var list rpc.SessionListResult
	ed2.MustCall("session/list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Turns != 1 || len(list.Sessions[0].Title) > 1024 {
		t.Fatalf("list: %d sessions", len(list.Sessions))
	}
	var res rpc.SessionResumeResult
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	var user, answer string
	for _, h := range res.History {
		switch h.Type {
		case "user":
			user = h.Text
		case "assistant":
			answer = h.Text
		}
	}
	if len(user) > 3<<20 || !strings.Contains(user, "more bytes were not recorded") ||
		len(answer) > 3<<20 || !strings.HasSuffix(answer, "more bytes were not recorded]") {
		t.Errorf("question %d bytes, answer %d bytes: not cut with a marker", len(user), len(answer))
	}
	// The huge turn is far more than the window: kin compacts first (one
	// request for the summary), then asks.
	e.Model.Script(modeltest.Reply{Text: []string{"## Asked: a huge question"}}, modeltest.Reply{Text: []string{"fine"}})
	if done := completed(ed2, start(t, ed2, sid, "still there?")); done["status"] != "completed" {
		t.Errorf("next turn: %v", done)
	}
}
