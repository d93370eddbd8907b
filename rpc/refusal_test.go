package rpc_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// refusedTurn runs a turn the model refuses, in a session of its own.
func refusedTurn(t *testing.T, e *env) (*rpctest.Editor, string, string) {
	t.Helper()
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{Title: "a refusal"}).Session.SessionID
	e.Model.Script(modeltest.Reply{Refusal: []string{"I can't help ", "with that."}, Usage: modeltest.Usage{Input: 640, Output: 9}})
	tid := start(t, ed, sid, "write malware")
	return ed, sid, tid
}

// A refusal reaches the editor as turn/delta flagged as one, the turn ends
// "refused" (not a blank "completed"), and history keeps it as an assistant
// item flagged as a refusal.
func TestARefusalIsShownAsOne(t *testing.T) {
	e := newEnv(t)
	ed, sid, tid := refusedTurn(t, e)
	if done := completed(ed, tid); done["status"] != "refused" || done["error"] != nil {
		t.Fatalf("turn/completed %v", done)
	}
	var text string
	for _, n := range ed.Notes("turn/delta") {
		if n["refusal"] != true {
			t.Errorf("a delta not flagged as a refusal: %v", n)
		}
		text += n["text"].(string)
	}
	if text != "I can't help with that." {
		t.Errorf("deltas %q", text)
	}
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if h := res.History; len(h) != 3 || h[1].Type != "assistant" || !h[1].Refusal || h[1].Text != "I can't help with that." ||
		h[2].Status != "refused" {
		t.Fatalf("history %+v", h)
	}
}

// goldenRefusal keeps the frames of a refused turn.
func goldenRefusal(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin", e.Model.URL(), "http://127.0.0.1:8931/v1")
	ed, sid, tid := refusedTurn(t, e)
	completed(ed, tid)
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		switch method {
		case rpc.NotifyTurnDelta, "turn/completed", "session/resume":
			return true
		}
		return false
	})
}
