package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func TestTextTurnStreamsAndCompletes(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"Hel", "lo, ", "world"}, Usage: modeltest.Usage{Input: 12, Output: 3}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "say hello")
	done := completed(ed, tid)
	if done["status"] != "completed" {
		t.Fatalf("status = %v, want completed (%v)", done["status"], done["error"])
	}
	if got := ed.Text(tid); got != "Hello, world" {
		t.Errorf("streamed text = %q", got)
	}
	usage := done["usage"].(map[string]any)
	if usage["inputTokens"] != 12.0 || usage["outputTokens"] != 3.0 {
		t.Errorf("usage = %v", usage)
	}
	ed.Wait("turn/started", rpctest.Field("turnId", tid))
	req := e.Model.Requests()[0]
	if req.Model != "mock-1" || !req.Stream || req.Authorization != "Bearer sk-test-canary" {
		t.Errorf("model request: model=%q stream=%v auth=%q", req.Model, req.Stream, req.Authorization)
	}
	if req.LastUserText() != "say hello" {
		t.Errorf("model saw %q", req.LastUserText())
	}
	// The log is on disk, private, one record per line.
	p := filepath.Join(e.Home, "sessions", sid+".jsonl")
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("session log: %v mode %v", err, st.Mode())
	}
	b, _ := os.ReadFile(p)
	if strings.Contains(string(b), "sk-test-canary") {
		t.Error("the API key reached the session log")
	}
}

func TestSecondTurnStartIsRefusedWhileRunning(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	e.Model.Script(modeltest.Reply{Text: []string{"a", "b"}, Hold: hold})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "first")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "second"})
	if code != rpc.CodeBusy || !strings.Contains(msg, "already running") {
		t.Errorf("got %d %q", code, msg)
	}
	close(hold)
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Errorf("first turn: %v", done)
	}
}

func TestCancelMidStream(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(modeltest.Reply{Text: []string{"partial ", "never"}, Hold: hold}, modeltest.Reply{Text: []string{"after"}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "long answer")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	var res rpc.TurnCancelResult
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, &res)
	if !res.Cancelled {
		t.Error("turn/cancel said nothing was running")
	}
	if done := completed(ed, tid); done["status"] != "cancelled" {
		t.Fatalf("status %v", done["status"])
	}
	if strings.Contains(ed.Text(tid), "never") {
		t.Error("text arrived after cancel")
	}
	// The session goes on.
	t2 := start(t, ed, sid, "again")
	if done := completed(ed, t2); done["status"] != "completed" {
		t.Errorf("next turn: %v", done)
	}
}

func TestModelFailuresEndTurnFailedAndSessionStaysUsable(t *testing.T) {
	cases := []struct {
		name  string
		reply modeltest.Reply
		want  string
	}{
		{"401", modeltest.Reply{HTTPStatus: 401}, "OPENAI_API_KEY"},
		{"429", modeltest.Reply{HTTPStatus: 429}, "rate limiting"},
		{"500", modeltest.Reply{HTTPStatus: 500}, "HTTP 500"},
		{"drop", modeltest.Reply{Text: []string{"a", "b", "c"}, DropAfter: 4}, "nothing was retried"},
		{"no completed", modeltest.Reply{Text: []string{"a"}, NoCompleted: true}, "without completing"},
		{"response.failed", modeltest.Reply{Text: []string{"a"}, Failed: "overloaded"}, "overloaded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.Model.Script(c.reply, modeltest.Reply{Text: []string{"recovered"}})
			ed, sid := e.editor()
			tid := start(t, ed, sid, "hi")
			done := completed(ed, tid)
			if done["status"] != "failed" || !strings.Contains(done["error"].(string), c.want) {
				t.Fatalf("got %v %q, want failed with %q", done["status"], done["error"], c.want)
			}
			if n := len(e.Model.Requests()); n != 1 {
				t.Errorf("model saw %d requests; a failed request must not be retried", n)
			}
			t2 := start(t, ed, sid, "again")
			if done := completed(ed, t2); done["status"] != "completed" || ed.Text(t2) != "recovered" {
				t.Errorf("next turn: %v %q", done, ed.Text(t2))
			}
		})
	}
}

func TestMissingKeyIsAClearError(t *testing.T) {
	e := newEnv(t)
	delete(e.Vars, "OPENAI_API_KEY")
	ed := rpctest.Start(t, e.Options())
	res := ed.Initialize(e.WS)
	if res.Model.Configured || !strings.Contains(res.Model.Missing, "OPENAI_API_KEY") {
		t.Errorf("initialize model info: %+v", res.Model)
	}
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &s)
	code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: s.Session.SessionID, Input: "hi"})
	if code != rpc.CodeNotConfigured || !strings.Contains(msg, "set OPENAI_API_KEY") {
		t.Errorf("got %d %q", code, msg)
	}
}

func TestTwoSessionsRunInParallel(t *testing.T) {
	e := newEnv(t)
	e.Model.SetRules([]modeltest.Rule{
		{WhenUser: "alpha", Reply: modeltest.ReplyJSON{Text: modeltest.Deltas{"A1", "A2"}, DelayMs: 20}},
		{WhenUser: "beta", Reply: modeltest.ReplyJSON{Text: modeltest.Deltas{"B1", "B2"}, DelayMs: 20}},
	})
	ed, s1 := e.editor()
	var s2 rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "second"}, &s2)
	t1 := start(t, ed, s1, "alpha")
	t2 := start(t, ed, s2.Session.SessionID, "beta")
	d1, d2 := completed(ed, t1), completed(ed, t2)
	if d1["status"] != "completed" || d2["status"] != "completed" {
		t.Fatalf("%v %v", d1, d2)
	}
	if ed.Text(t1) != "A1A2" || ed.Text(t2) != "B1B2" {
		t.Errorf("texts %q %q", ed.Text(t1), ed.Text(t2))
	}
}

func TestRequestsBeforeInitializeAndUnknownMethods(t *testing.T) {
	e := newEnv(t)
	ed := rpctest.Start(t, e.Options())
	if code, msg := ed.CallErr("session/list", nil); code != rpc.CodeNotInitialized || !strings.Contains(msg, "initialize") {
		t.Errorf("before initialize: %d %q", code, msg)
	}
	ed.Initialize(e.WS)
	if code, _ := ed.CallErr("no/such", nil); code != rpc.CodeMethodNotFound {
		t.Errorf("unknown method: %d", code)
	}
	if code, _ := ed.CallErr("session/resume", map[string]any{"sessionId": "s_nope"}); code != rpc.CodeSessionNotFound {
		t.Errorf("unknown session: %d", code)
	}
	if code, _ := ed.CallErr("turn/start", map[string]any{"sessionId": 5}); code != rpc.CodeInvalidParams {
		t.Errorf("bad params: %d", code)
	}
}

func TestShutdownThenExitEndsWithZero(t *testing.T) {
	e := newEnv(t)
	ed, _ := e.editor()
	ed.MustCall("shutdown", nil, nil)
	ed.Notify("exit", nil)
	select {
	case <-ed.Done:
	case <-time.After(rpctest.Timeout):
		t.Fatal("server did not exit")
	}
	if ed.Exit != 0 {
		t.Errorf("exit code %d", ed.Exit)
	}
}

func TestCallLeftRunningByACrashIsUnknownOnResume(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.Home, "sessions")
	os.MkdirAll(dir, 0o700)
	log := `{"type":"session","time":"2026-11-01T10:00:00Z","sessionId":"s_crash","title":"crash"}
{"type":"user","time":"2026-11-01T10:00:01Z","turnId":"t_1","text":"deploy"}
{"type":"toolCall","time":"2026-11-01T10:00:02Z","turnId":"t_1","callId":"c1","name":"bash","arguments":"{\"command\":\"make deploy\"}"}
{"type":"decision","time":"2026-11-01T10:00:03Z","turnId":"t_1","callId":"c1","decision":"allow_once","reason":"person"}
`
	os.WriteFile(filepath.Join(dir, "s_crash.jsonl"), []byte(log), 0o600)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: "s_crash"}, &res)
	if res.History[1].Type != "toolCall" || res.History[1].Status != "unknown" {
		t.Fatalf("history %+v", res.History)
	}
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == "acknowledge_unknown" {
			return "allow_once"
		}
		return "deny"
	})
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	tid := start(t, ed, "s_crash", "what happened?")
	ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "acknowledge_unknown"), rpctest.Field("turnId", tid)))
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Errorf("%v", done)
	}
}
