package main_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// initialized starts a kin serve on home and runs the handshake.
func initialized(t *testing.T, home string, m *modeltest.Server) *proc {
	t.Helper()
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL(), "KIN_HOME="+home)
	p.send(req(1, "initialize", map[string]any{}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	return p
}

func method(name string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == name }
}

func result(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %v", m)
	}
	return r
}

// kill -9 during a turn: the next kin closes the turn (failed, "kin stopped
// during this turn"), keeps what had streamed, and owns the session at once
// (the lock died with the process); the next question does not follow the
// last one without an answer between them.
func TestBinaryKilledMidTurnClosesTheTurnOnReopen(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	hold := make(chan struct{})
	m.Script(modeltest.Reply{Text: []string{"what streamed ", "never shown"}, Hold: hold})
	home := t.TempDir()
	p := initialized(t, home, m)
	p.send(req(2, "session/new", nil))
	sid := result(t, p.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "deploy"}))
	tid := result(t, p.until(idIs(3)))["turnId"]
	p.until(method("turn/delta"))
	// A reloaded editor would see the turn running, and what streamed.
	p.send(req(4, "session/resume", map[string]any{"sessionId": sid}))
	res := result(t, p.until(idIs(4)))
	if res["runningTurnId"] != tid {
		t.Errorf("resume during the turn: runningTurnId %v, want %v", res["runningTurnId"], tid)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	close(hold)

	m.Script(modeltest.Reply{Text: []string{"it was cut off"}})
	p2 := initialized(t, home, m)
	p2.send(req(2, "session/resume", map[string]any{"sessionId": sid}))
	res = result(t, p2.until(idIs(2)))
	if res["readOnly"] == true || res["runningTurnId"] != nil {
		t.Errorf("after kill -9: readOnly %v (%v) running %v", res["readOnly"], res["readOnlyReason"], res["runningTurnId"])
	}
	var got []string
	for _, h := range res["history"].([]any) {
		h := h.(map[string]any)
		got = append(got, h["type"].(string)+":"+str(h["text"])+str(h["status"])+str(h["error"]))
	}
	want := "user:deploy|assistant:what streamed |turn:failedkin stopped during this turn"
	if strings.Join(got, "|") != want {
		t.Errorf("history after kill -9:\n got %q\nwant %q", strings.Join(got, "|"), want)
	}
	p2.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "what happened?"}))
	p2.until(idIs(3))
	if done := p2.until(method("turn/completed")); done["params"].(map[string]any)["status"] != "completed" {
		t.Fatalf("next turn: %v", done)
	}
	var roles []string
	for _, it := range m.Requests()[1].Input {
		roles = append(roles, str(it["role"]))
	}
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Errorf("next request's messages: %v", roles)
	}
}

// Two kin serve on one KIN_HOME: the second gets the session read-only and
// cannot start a turn while the first has it; once the first exits, the
// second may.
func TestBinaryTwoServesOneSession(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	hold := make(chan struct{})
	m.Script(modeltest.Reply{Text: []string{"first ", "answer"}, Hold: hold})
	home := t.TempDir()
	p1 := initialized(t, home, m)
	p1.send(req(2, "session/new", nil))
	sid := result(t, p1.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)
	p1.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "one"}))
	p1.until(method("turn/delta"))

	p2 := initialized(t, home, m)
	p2.send(req(2, "session/resume", map[string]any{"sessionId": sid}))
	res := result(t, p2.until(idIs(2)))
	if res["readOnly"] != true || !strings.Contains(str(res["readOnlyReason"]), "open in another kin") {
		t.Errorf("second kin's resume: %v", res)
	}
	p2.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "two"}))
	e := p2.until(idIs(3))["error"].(map[string]any)
	if e["code"] != -32011.0 || !strings.Contains(str(e["message"]), "open in another kin") {
		t.Errorf("second kin's turn/start: %v", e)
	}

	close(hold)
	if done := p1.until(method("turn/completed")); done["params"].(map[string]any)["status"] != "completed" {
		t.Fatalf("first kin's turn: %v", done)
	}
	p1.stdin.Close()
	p1.wait()

	m.Script(modeltest.Reply{Text: []string{"second answer"}})
	p2.send(req(4, "turn/start", map[string]any{"sessionId": sid, "input": "two"}))
	if r := p2.until(idIs(4)); r["result"] == nil {
		t.Fatalf("turn/start once the first kin left: %v", r)
	}
	if done := p2.until(method("turn/completed")); done["params"].(map[string]any)["status"] != "completed" {
		t.Errorf("second kin's turn: %v", done)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
