package rpc_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// goldenBranching records turn/steer (queued, and refused for an ended
// turn), turn/steered, turn/rollback of a turn that edited two files,
// session/fork, and the history that shows them.
func goldenBranching(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	e.Write("cache.go", "package main\n\nvar cache map[string]string\n")
	e.Write("cache_test.go", "package main\n")
	u := modeltest.Usage{Input: 900, Output: 30}
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Reading cache.go."}, Calls: []modeltest.Call{{ID: "call_b1", Name: "read_file", Arguments: `{"path":"cache.go"}`}}, Hold: hold, Usage: u},
		modeltest.Reply{Text: []string{"The map is never made; I will add a test too."}, Usage: u},
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "call_b2", Name: "write_file", Arguments: `{"path":"cache.go","content":"package main\n\nvar cache = map[string]string{}\n"}`},
			{ID: "call_b3", Name: "write_file", Arguments: `{"path":"cache_test.go","content":"package main\n\nimport \"testing\"\n\nfunc TestCache(t *testing.T) {}\n"}`},
		}, Usage: u},
		modeltest.Reply{Text: []string{"Fixed, with a test."}, Usage: u},
	)
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "the nil map"}, &s)
	sid := s.Session.SessionID
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	t1 := start(t, ed, sid, "why does the cache panic?")
	ed.Wait("turn/delta", rpctest.Field("turnId", t1))
	ed.MustCall("turn/steer", rpc.TurnSteerParams{SessionID: sid, TurnID: t1, Input: "and add a test for it"}, nil)
	close(hold)
	completed(ed, t1)
	ed.Wait("turn/steered", rpctest.Field("turnId", t1))
	if code, _ := ed.CallErr("turn/steer", rpc.TurnSteerParams{SessionID: sid, TurnID: t1, Input: "one more thing"}); code != rpc.CodeTurnEnded {
		t.Fatalf("steer of an ended turn: %d", code)
	}
	t2 := start(t, ed, sid, "fix it")
	completed(ed, t2)
	ed.MustCall("turn/rollback", rpc.TurnRollbackParams{SessionID: sid, Turns: 1}, nil)
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
	var f rpc.SessionForkResult
	ed.MustCall("session/fork", rpc.SessionForkParams{SessionID: sid, TurnID: t1}, &f)

	z.pin(0, sid, "s_20261130T231800_9d3e21")
	z.pin(0, f.Session.SessionID, "s_20261130T231805_a1c7f4")
	z.pin(1, t1, "t_00000201")
	z.pin(1, t2, "t_00000202")
	// This kin's question ids are its own (another kin's "ap_1" is
	// another question).
	wire := ed.Wire()
	for i := range wire {
		wire[i].Msg = questionID.ReplaceAll(wire[i].Msg, []byte(`"${1}_br${2}"`))
	}
	z.pin(4, `"ap_br1"`, `"ap_201"`)
	z.pin(4, `"ap_br2"`, `"ap_202"`)
	g.addWire(wire, func(method string, m map[string]any) bool {
		switch method {
		case rpc.MethodTurnSteer, rpc.NotifyTurnSteered, rpc.MethodTurnRollback, rpc.MethodSessionFork:
			return true
		case "session/resume":
			p, _ := m["params"].(map[string]any)
			return p == nil || p["sessionId"] == sid
		}
		return false
	})
}
