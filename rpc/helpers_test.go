package rpc_test

import (
	"testing"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// env is one test's world (see rpctest.World) plus the editor helpers below.
type env struct {
	*rpctest.World
	t *testing.T
}

func newEnv(t *testing.T) *env { return &env{World: rpctest.NewWorld(t), t: t} }

// editor starts a server and an initialized editor with one new session.
func (e *env) editor() (*rpctest.Editor, string) {
	e.t.Helper()
	ed := rpctest.Start(e.t, e.Options())
	ed.Initialize(e.WS)
	var res rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &res)
	return ed, res.Session.SessionID
}

// start begins a turn and returns its id.
func start(t *testing.T, ed *rpctest.Editor, sid, input string) string {
	t.Helper()
	var res rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: input}, &res)
	if res.TurnID == "" {
		t.Fatal("turn/start returned no turnId")
	}
	return res.TurnID
}

// completed waits for the turn's turn/completed.
func completed(ed *rpctest.Editor, turnID string) map[string]any {
	return ed.Wait("turn/completed", rpctest.Field("turnId", turnID))
}

// trustProjects answers every project_trust approval with "trust" (the
// person trusts what the folder brings), and leaves the others.
func trustProjects(ed *rpctest.Editor) {
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == rpc.KindProjectTrust {
			return "trust"
		}
		return ""
	})
}

// answerApprovals answers every approval/request with decide's decision.
func answerApprovals(ed *rpctest.Editor, decide func(req map[string]any) string) {
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "approval/request" {
			return
		}
		var req map[string]any
		_ = jsonUnmarshal(n.Params, &req)
		d := decide(req)
		if d == "" {
			return
		}
		go ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: d}, nil)
	})
}
