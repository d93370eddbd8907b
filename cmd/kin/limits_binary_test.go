package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// serveOn starts a kin serve on home, with the model id mock, and runs the
// handshake.
func serveOn(t *testing.T, home string, m *modeltest.Server) *proc {
	t.Helper()
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL(), "KIN_HOME="+home, "KIN_MODEL=mock")
	p.send(req(1, "initialize", map[string]any{"capabilities": map[string]any{"approvals": true}}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return p
}

func params(m map[string]any) map[string]any {
	p, _ := m["params"].(map[string]any)
	return p
}

// A day's limit holds across kin processes: the first kin's session uses
// the day's tokens, and a second kin (another process, another session)
// is asked before its first request; "stop" sends nothing, "continue"
// lets the next turn go on, and usage/summary counts both kins.
func TestBinaryADayLimitIsCrossedAcrossTwoSessionsInTwoProcesses(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	home := t.TempDir()
	settings := `{"limits":{"dayTokens":3000,"currency":"EUR","prices":{"mock":{"input":2,"output":8}}}}`
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}

	// The first kin: one turn, within the day's limit, priced.
	m.Script(modeltest.Reply{Text: []string{"first"}, Usage: modeltest.Usage{Input: 2000, Output: 500}})
	p1 := serveOn(t, home, m)
	p1.send(req(2, "session/new", nil))
	sid1 := result(t, p1.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)
	p1.send(req(3, "turn/start", map[string]any{"sessionId": sid1, "input": "one"}))
	p1.until(idIs(3))
	done := params(p1.until(method("turn/completed")))
	u := done["usage"].(map[string]any)
	if done["status"] != "completed" || u["currency"] != "EUR" || u["cost"] != 0.008 || u["sessionCost"] != 0.008 {
		t.Fatalf("the first kin's turn: %v", done)
	}
	p1.stdin.Close()
	if err := p1.cmd.Wait(); err != nil {
		t.Fatalf("the first kin exited: %v", err)
	}

	// The second kin, another session: asked before its first request.
	p2 := serveOn(t, home, m)
	p2.send(req(2, "session/new", nil))
	sid2 := result(t, p2.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)
	p2.send(req(3, "turn/start", map[string]any{"sessionId": sid2, "input": "two"}))
	ap := params(p2.until(method("approval/request")))
	if ap["kind"] != "limit" || ap["sessionId"] != sid2 || !strings.HasPrefix(ap["title"].(string), "Today, kin has used 2,500 tokens of its limit of 3,000 tokens (limits.dayTokens)") {
		t.Fatalf("the limit approval: %v", ap)
	}
	var opts []string
	for _, o := range ap["options"].([]any) {
		opts = append(opts, o.(map[string]any)["optionId"].(string))
	}
	if strings.Join(opts, " ") != "allow_once allow_always deny" {
		t.Errorf("options %v", opts)
	}
	p2.send(req(4, "approval/respond", map[string]any{"requestId": ap["requestId"], "decision": "deny"}))
	done = params(p2.until(method("turn/completed")))
	if done["status"] != "limit" || !strings.Contains(done["error"].(string), "limits.dayTokens") {
		t.Fatalf("after stop: %v", done)
	}
	if n := len(m.Requests()); n != 1 {
		t.Fatalf("%d model requests; the stopped turn sent one", n)
	}

	// Asked again, and "continue this turn": the request is sent.
	m.Script(modeltest.Reply{Text: []string{"second"}, Usage: modeltest.Usage{Input: 1000, Output: 100}})
	p2.send(req(5, "turn/start", map[string]any{"sessionId": sid2, "input": "two again"}))
	ap = params(p2.until(method("approval/request")))
	p2.send(req(6, "approval/respond", map[string]any{"requestId": ap["requestId"], "decision": "allow_once"}))
	if done = params(p2.until(method("turn/completed"))); done["status"] != "completed" {
		t.Fatalf("after continue: %v", done)
	}
	p2.send(req(7, "usage/summary", map[string]any{"scope": "day"}))
	day := result(t, p2.until(idIs(7)))
	if day["totalTokens"] != 3600.0 || day["currency"] != "EUR" || day["cost"] != 0.0108 {
		t.Errorf("the day: %v", day)
	}
	p2.send(req(8, "usage/summary", map[string]any{"scope": "session", "sessionId": sid1}))
	if s := result(t, p2.until(idIs(8))); s["totalTokens"] != 2500.0 {
		t.Errorf("the first kin's session, read by the second: %v", s)
	}
	p2.send(req(9, "usage/summary", map[string]any{"scope": "session"}))
	if e := p2.until(idIs(9)); e["error"] == nil {
		t.Errorf("a session summary without a session: %v", e)
	}
}
