package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// approving reads frames until one matches, allowing once every approval
// kin asks for on the way (the server's launch, the tool call).
func approving(p *proc, id *int, match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	return p.until(func(f map[string]any) bool {
		if f["method"] == "approval/request" {
			ps := f["params"].(map[string]any)
			*id++
			p.send(req(*id, "approval/respond", map[string]any{"requestId": ps["requestId"], "decision": "allow_once"}))
			return false
		}
		return match(f)
	})
}

func note(name string, fields map[string]any) func(map[string]any) bool {
	return func(f map[string]any) bool {
		if f["method"] != name {
			return false
		}
		ps, _ := f["params"].(map[string]any)
		for k, v := range fields {
			if ps[k] != v {
				return false
			}
		}
		return true
	}
}

// kill -9 while a call runs as an MCP task: the built binary that next
// owns the session goes on polling the task on resume (the server sees one
// call), ends the call with the task's result on the wire and in the log,
// and the model gets it on the next turn.
func TestBinaryKilledDuringATaskFollowsItOnResume(t *testing.T) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "step", "deployed v2")}
	url := mcptest.ServeHTTPHandler(t, s).URL
	home := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"jobs": map[string]any{"type": "http", "url": url}}})
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	m := modeltest.New()
	defer m.Close()
	m.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "j1", Name: "mcp__jobs__job", Arguments: "{}"}}})

	p := initialized(t, home, m)
	id := 1
	approving(p, &id, note("mcp/status", map[string]any{"server": "jobs", "state": "connected"}))
	id++
	p.send(req(id, "session/new", nil))
	sid := result(t, approving(p, &id, idIs(float64(id))))["session"].(map[string]any)["sessionId"].(string)
	id++
	p.send(req(id, "turn/start", map[string]any{"sessionId": sid, "input": "deploy"}))
	approving(p, &id, note("turn/toolCall", map[string]any{"callId": "j1", "status": "working"}))
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	finish.Store(true)

	m.Script(modeltest.Reply{Text: []string{"it is deployed"}})
	p2 := initialized(t, home, m)
	id = 1
	approving(p2, &id, note("mcp/status", map[string]any{"server": "jobs", "state": "connected"}))
	id = 100
	p2.send(req(id, "session/resume", map[string]any{"sessionId": sid}))
	res := result(t, approving(p2, &id, idIs(float64(id))))
	if res["readOnly"] == true {
		t.Fatalf("resumed read-only: %v", res["readOnlyReason"])
	}
	final := approving(p2, &id, func(f map[string]any) bool {
		ps, _ := f["params"].(map[string]any)
		return f["method"] == "turn/toolCall" && ps["callId"] == "j1" && ps["status"] != "working"
	})["params"].(map[string]any)
	if final["status"] != "completed" || !strings.Contains(str(final["output"]), "deployed v2") {
		t.Fatalf("the call ended %v: %v", final["status"], final["output"])
	}
	if s.Calls.Load() != 1 {
		t.Errorf("the server saw %d calls; a task is polled again, never the call", s.Calls.Load())
	}
	id++
	p2.send(req(id, "turn/start", map[string]any{"sessionId": sid, "input": "done?"}))
	if done := approving(p2, &id, method("turn/completed")); done["params"].(map[string]any)["status"] != "completed" {
		t.Fatalf("next turn: %v", done)
	}
	reqs := m.Requests()
	got := false
	for _, it := range reqs[len(reqs)-1].Input {
		if it["type"] == "function_call_output" && it["call_id"] == "j1" {
			got = strings.Contains(str(it["output"]), "deployed v2")
		}
	}
	if !got {
		t.Errorf("the next request lacks the task's result: %v", reqs[len(reqs)-1].Input)
	}
}
