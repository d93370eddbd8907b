package rpc_test

import (
	"fmt"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// goldenPeer records working like a peer (issue 15): a session in
// auto-edit mode, a plan, kin's own question, an edit applied unasked and
// undone, the continue question, the mode changed, commands listed and
// run.
func goldenPeer(t *testing.T, g *recorder, w *world) {
	// Token counts are the script's: the mock would count the request's
	// bytes, which hold the test's temporary paths.
	u := modeltest.Usage{Input: 500, Output: 20}
	var s rpc.SessionResult
	g.call("session/new", rpc.SessionNewParams{Title: "plan the fix", Mode: "auto-edit"}, &s)
	sid := s.Session.SessionID
	plan := func(second string) string {
		return `{"entries":[{"content":"read the failing test","status":"completed"},{"content":"fix the race in the cache","status":"` + second + `","priority":"high"},{"content":"run the tests","status":"pending"}]}`
	}
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_p1", Name: "update_plan", Arguments: plan("in_progress")}}, Usage: u},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_q1", Name: "ask", Arguments: `{"questions":[{"question":"Which database should the tests use?","options":["postgres","sqlite"]},{"question":"Anything else I should know?"}]}`}}, Usage: u},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_w1", Name: "write_file", Arguments: `{"path":"cache.go","content":"package main\n\nvar cache = map[string]string{}\n"}`}}, Usage: u},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_p2", Name: "update_plan", Arguments: plan("completed")}}, Usage: u},
		modeltest.Reply{Text: []string{"Fixed."}, Usage: u},
	)
	var ts rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "fix the race"}, &ts)
	g.note("turn/plan", rpctest.Field("turnId", ts.TurnID))
	q := g.note("elicitation/request", rpctest.Field("source", "kin"))
	g.call("elicitation/respond", rpc.ElicitationRespondParams{RequestID: q["requestId"].(string), Action: "accept",
		Content: params("q1", "sqlite", "q2", "the tests run offline")}, nil)
	g.note("elicitation/resolved", rpctest.Field("requestId", q["requestId"]))
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_w1"), rpctest.Field("status", "completed")))
	g.note("turn/completed", rpctest.Field("turnId", ts.TurnID))

	// At the call limit kin asks to go on; no. (A session of its own, so
	// the resume below stays short.)
	var sl rpc.SessionResult
	g.ed.MustCall("session/new", rpc.SessionNewParams{}, &sl)
	var replies []modeltest.Reply
	for i := 0; i <= 16; i++ {
		replies = append(replies, modeltest.Reply{Calls: []modeltest.Call{{ID: fmt.Sprintf("call_l%d", i), Name: "list_dir", Arguments: "{}"}}, Usage: u})
	}
	w.model.Script(replies...)
	var tl rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sl.Session.SessionID, Input: "look around"}, &tl)
	more := g.note("approval/request", rpctest.Field("kind", "continue"))
	g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: more["requestId"].(string), Decision: "deny"}, nil)
	g.note("turn/completed", rpctest.Field("turnId", tl.TurnID))

	g.call("turn/undo", rpc.TurnUndoParams{SessionID: sid}, nil)
	g.fail("turn/undo", rpc.TurnUndoParams{SessionID: sid}, rpc.CodeNotFound)
	g.call("session/configure", rpc.SessionConfigureParams{SessionID: sid, Mode: "ask"}, nil)
	g.call("commands/list", rpc.CommandsListParams{SessionID: sid}, nil)
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/plan"}, nil)
	w.model.Script(modeltest.Reply{Text: []string{"No bugs."}, Usage: u})
	var tp rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/profile:review cache.go"}, &tp)
	g.note("turn/started", rpctest.Field("turnId", tp.TurnID))
	g.ed.Wait("turn/completed", rpctest.Field("turnId", tp.TurnID))
	g.fail("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/frobnicate"}, rpc.CodeInvalidParams)
	g.call("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
}
