package rpc_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// goldenBranching records turn/steer (queued, and refused for an ended
// turn), turn/steered, turn/rollback of a turn that edited two files,
// session/fork, turn/rollback in the fork of the turn it copied (whose
// files are the original's: errors), and the history that shows them;
// then kin is stopped as if killed between the rollback's two records,
// and the next kin's history shows that rollback unfinished (errors).
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
	logPath := filepath.Join(e.Home, "sessions", sid+".jsonl")
	atKill := beforeRollbackOutcome(t, logPath)
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
	var f rpc.SessionForkResult
	ed.MustCall("session/fork", rpc.SessionForkParams{SessionID: sid, TurnID: t1}, &f)
	// The fork's copy of t1 shares its files with the original: rolling
	// it back here leaves them, and says so in errors.
	var frb rpc.TurnRollbackResult
	ed.MustCall("turn/rollback", rpc.TurnRollbackParams{SessionID: f.Session.SessionID, Turns: 1}, &frb)
	if len(frb.Errors) != 1 {
		t.Fatalf("rollback of the turn a fork copied: %+v, want one error", frb)
	}
	ed.MustCall("shutdown", nil, nil)
	ed.Notify("exit", nil)
	<-ed.Done
	// As if kin had been killed after it put t2's files back and before
	// it recorded what it did: the log as it was then.
	if err := os.WriteFile(logPath, atKill, 0o600); err != nil {
		t.Fatal(err)
	}
	next := e.connect()
	var r rpc.SessionResumeResult
	next.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &r)
	if h := r.History[len(r.History)-1]; h.Rollback == nil || len(h.Rollback.Errors) != 1 {
		t.Fatalf("the next kin's history ends with %+v, want the rollback unfinished", h)
	}

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
	keep := func(method string, m map[string]any) bool {
		switch method {
		case rpc.MethodTurnSteer, rpc.NotifyTurnSteered, rpc.MethodTurnRollback, rpc.MethodSessionFork:
			return true
		case "session/resume":
			p, _ := m["params"].(map[string]any)
			return p == nil || p["sessionId"] == sid
		}
		return false
	}
	g.addWire(wire, keep)
	g.addWire(next.Wire(), keep)
}

// beforeRollbackOutcome is the session log at path without its last
// record, which must be a rollback's outcome: the log of a kin killed
// after it put the rollback's files back and before it recorded so.
func beforeRollbackOutcome(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimSuffix(b, []byte("\n"))
	cut := bytes.LastIndexByte(body, '\n') + 1
	var last struct {
		Type     string          `json:"type"`
		Status   string          `json:"status"`
		Rollback json.RawMessage `json:"rollback"`
	}
	if err := json.Unmarshal(body[cut:], &last); err != nil || last.Type != "rollback" || last.Status != "" || last.Rollback == nil {
		t.Fatalf("the log's last record is not a rollback's outcome: %s", body[cut:])
	}
	return b[:cut]
}
