package rpc_test

import (
	"fmt"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// goldenSubagents records a subagent's frames: the delegate call with its
// subagent, the subagent's own notifications nested under it (started, a
// delta, a call, usage, completed), its approval with both sessions, and
// session/list and session/resume of a subagent's session.
func goldenSubagents(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin")
	e.put("internal/store/store.go", "package store\n\nfunc Save() error {\n\treturn nil\n}\n")
	const question, task = "make Save atomic", "Make Save in internal/store/store.go write a temp file and rename it; say what you changed."
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Text: []string{"Reading store.go."}, Calls: []modeltest.Call{{ID: "call_s1", Name: "read_file", Arguments: `{"path":"internal/store/store.go"}`}}, Usage: modeltest.Usage{Input: 1200, Output: 40}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_s2", Name: "edit_file", Arguments: `{"path":"internal/store/store.go","old_string":"\treturn nil","new_string":"\treturn renameio.WriteFile(path, data)"}`}}, Usage: modeltest.Usage{Input: 1500, Output: 60}},
		modeltest.Reply{Text: []string{"Save now writes through renameio."}, Usage: modeltest.Usage{Input: 1700, Output: 12}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d1", task, "agent")}, Usage: modeltest.Usage{Input: 900, Output: 50}},
		modeltest.Reply{Text: []string{"Done: Save is atomic now."}, Usage: modeltest.Usage{Input: 1000, Output: 9}})
	ed := e.connect()
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "atomic saves"}, &s)
	sid := s.Session.SessionID
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, question)
	completed(ed, tid)
	child := ed.Wait("turn/started", nested(sid, "call_d1"))["sessionId"].(string)
	ed.MustCall("session/list", rpc.SessionListParams{ParentID: sid}, nil)
	ed.MustCall("session/list", rpc.SessionListParams{IncludeSubagents: true}, nil)
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: child}, nil)
	// Fixed names of their own, so that these frames do not renumber the
	// ids of every other file.
	ctid := ed.Wait("turn/started", nested(sid, "call_d1"))["turnId"].(string)
	z.pin(0, sid, "s_20261130T231700_5b2e1d")
	z.pin(0, child, "s_20261130T231702_8c4f07")
	z.pin(1, tid, "t_00000101")
	z.pin(1, ctid, "t_00000102")
	// This kin's question ids are its own (another kin's "ap_1" is
	// another question).
	wire := ed.Wire()
	for i := range wire {
		wire[i].Msg = questionID.ReplaceAll(wire[i].Msg, []byte(`"${1}_sub${2}"`))
	}
	z.pin(4, `"ap_sub1"`, `"ap_101"`)

	kept := map[string]bool{}
	once := func(key string) bool {
		if kept[key] {
			return false
		}
		kept[key] = true
		return true
	}
	g.addWire(wire, func(method string, m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		sub, _ := p["subagent"].(map[string]any)
		switch method {
		case "session/list":
			return p != nil
		case "session/resume":
			return p["sessionId"] == child
		case "turn/toolCall":
			switch {
			case p["callId"] == "call_d1" && sub != nil:
				return once(fmt.Sprint(method, p["status"], sub["sessionId"] != nil))
			case p["parentSessionId"] != nil && (p["status"] == "awaiting_approval" || p["status"] == "completed"):
				return once(fmt.Sprint(method, p["callId"], p["status"]))
			}
		case "turn/started", "turn/delta", "turn/usage", "turn/completed", "approval/request", "approval/resolved":
			return p["parentSessionId"] != nil && once(method)
		}
		return false
	})
}

// pin names old (a match of volatile[i]) new, wherever it appears.
func (z *normalizer) pin(i int, old, new string) { z.seen[fmt.Sprint(i, old)] = new }
