package rpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// tasksWorld connects kin to a Tasks-extension server s (its launch
// allowed, then connected) and starts, in a new session whose approvals
// are all allowed, the turn "run the job": the model calls the server's
// tool "job" (j1), then answers with then. It returns the world, the
// editor, the session and the turn.
func tasksWorld(t *testing.T, s *mcptest.TaskServer, then ...modeltest.Reply) (w *world, ed *rpctest.Editor, sid, tid string) {
	t.Helper()
	w = newWorld(t, map[string]any{"jobs": map[string]any{"type": "http", "url": mcptest.ServeHTTPHandler(t, s).URL}})
	ed = w.editor()
	allowLaunch(ed, "jobs")
	w.model.Script(append([]modeltest.Reply{{Calls: []modeltest.Call{{ID: "j1", Name: "mcp__jobs__job", Arguments: "{}"}}}}, then...)...)
	allowEveryApproval(ed)
	sid = newSession(t, ed)
	return w, ed, sid, start(t, ed, sid, "run the job")
}

// subagentTaskWorld is tasksWorld with the job's call made by a subagent:
// the turn "run the job through a subagent" delegates it (d1), and the
// subagent calls the tool "job" (j1) of the server at url. It returns once
// that call is working: the world, the editor, the parent session and the
// subagent's.
func subagentTaskWorld(t *testing.T, url string) (w *world, ed *rpctest.Editor, sid, child string) {
	t.Helper()
	w = newWorld(t, map[string]any{"jobs": map[string]any{"type": "http", "url": url}})
	const question, task = "run the job through a subagent", "Run the job."
	w.model.Route(modeltest.FirstUser(task), modeltest.Reply{Calls: []modeltest.Call{{ID: "j1", Name: "mcp__jobs__job", Arguments: "{}"}}})
	w.model.Route(modeltest.FirstUser(question), modeltest.Reply{Calls: []modeltest.Call{delegateCall("d1", task, "agent")}})
	ed = w.editor()
	allowLaunch(ed, "jobs")
	allowEveryApproval(ed)
	sid = newSession(t, ed)
	start(t, ed, sid, question)
	working := ed.Wait("turn/toolCall", rpctest.All(nested(sid, "d1"), rpctest.Field("callId", "j1"), rpctest.Field("status", "working")))
	return w, ed, sid, working["sessionId"].(string)
}

// A call the server runs as a task is shown "working" with the task's
// status message while it runs, then ends with the task's result; the
// server saw one call.
func TestTaskCallIsWorkingThenCompleted(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		if n < 3 {
			return map[string]any{"status": "working", "statusMessage": fmt.Sprintf("indexing %d/2", n)}
		}
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "indexed 2 files"}}}}
	}}
	_, ed, _, tid := tasksWorld(t, s, modeltest.Reply{Text: []string{"done"}})
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", tid)); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	working := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "working"), rpctest.Field("statusMessage", "task working: indexing 2/2")))
	if working["name"] != "mcp__jobs__job" {
		t.Errorf("working %v", working)
	}
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(final["output"]), "indexed 2 files") {
		t.Errorf("final %v", final)
	}
	if s.Calls.Load() != 1 {
		t.Errorf("the server saw %d calls", s.Calls.Load())
	}
}

// goldenTasks records the "working" status of a call an MCP server turned
// into a task (with its statusMessage).
func goldenTasks(t *testing.T, g *recorder, z *normalizer) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		if n < 3 {
			return map[string]any{"status": "working", "statusMessage": fmt.Sprintf("indexing %d/2", n)}
		}
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "indexed 2 files"}}}}
	}}
	_, ed, sid, tid := tasksWorld(t, s, modeltest.Reply{Text: []string{"done"}})
	completed(ed, tid)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("statusMessage", "task working: indexing 2/2")))
	// Fixed names of their own, so that these frames do not renumber the
	// ids of every other file.
	z.pin(0, sid, "s_20261130T231900_7d1e2a")
	z.pin(1, tid, "t_00000201")
	kept := false
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		if method != "turn/toolCall" || kept || p["status"] != "working" || p["statusMessage"] != "task working: indexing 2/2" {
			return false
		}
		kept = true
		return true
	})
}
