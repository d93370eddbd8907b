package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/rpc"
)

// goldenUndoUnfinished records an undo kin was stopped in: its history
// item has error (and no files, which went back is not known), and
// turn/undo of the turn finishes it.
func goldenUndoUnfinished(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	e.Write("cache.go", "package main\n\nvar cache map[string]string\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_u1", Name: "write_file", Arguments: `{"path":"cache.go","content":"package main\n\nvar cache = map[string]string{}\n"}`}}},
		modeltest.Reply{Text: []string{"Made the map."}},
	)
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "the nil map", Mode: "auto-edit"}, &s)
	sid := s.Session.SessionID
	t1 := start(t, ed, sid, "make the map")
	completed(ed, t1)
	ed.MustCall("shutdown", nil, nil)
	ed.Notify("exit", nil)
	<-ed.Done
	// What a kin stopped while it put the turn's files back leaves: the
	// undo's first record, and not its outcome.
	b, err := json.Marshal(session.Record{Type: session.TypeUndo, Status: session.UndoStarted, Time: time.Now().UTC(),
		Undo: &session.Undo{TurnID: t1, Question: "make the map", Restored: []string{}}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(e.Home, "sessions", sid+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ed = e.connect()
	var r rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionResumeParams{SessionID: sid, Limit: 1}, &r)
	if len(r.History) != 1 || r.History[0].Undo == nil || r.History[0].Undo.Error == "" {
		t.Fatalf("the unfinished undo's item: %+v", r.History)
	}
	var u rpc.TurnUndoResult
	ed.MustCall("turn/undo", rpc.TurnUndoParams{SessionID: sid, TurnID: t1}, &u)
	if len(u.Restored) != 1 || u.Error != "" {
		t.Fatalf("turn/undo of the unfinished undo's turn: %+v", u)
	}

	z.pin(0, sid, "s_20261130T231900_5b2e07")
	z.pin(1, t1, "t_00000301")
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		switch method {
		case "session/resume", rpc.MethodTurnUndo:
			return p != nil && p["sessionId"] == sid
		}
		return false
	})
}
