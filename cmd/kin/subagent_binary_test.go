package main_test

import (
	"strings"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// kill -9 while a subagent runs: the next kin closes the subagent's turn
// failed, as any turn a stopped kin left, and the parent's delegate call
// unknown (a subagent in agent mode may have changed things), naming the
// subagent's session; the parent's next question asks to acknowledge it.
func TestBinaryKilledMidSubagentClosesBothTurns(t *testing.T) {
	m := modeltest.New()
	defer m.Close()
	hold := make(chan struct{})
	const question, task = "refactor the parser", "Refactor parse.go."
	m.Route(modeltest.FirstUser(task), modeltest.Reply{Text: []string{"working on ", "it"}, Hold: hold})
	m.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_d", Name: "delegate", Arguments: `{"task":"` + task + `","mode":"agent"}`}}},
		modeltest.Reply{Text: []string{"It was cut off."}})
	home := t.TempDir()
	p := initialized(t, home, m)
	p.send(req(2, "session/new", nil))
	sid := result(t, p.until(idIs(2)))["session"].(map[string]any)["sessionId"].(string)
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": question}))
	p.until(idIs(3))
	delta := p.until(func(m map[string]any) bool {
		params, _ := m["params"].(map[string]any)
		return m["method"] == "turn/delta" && params["parentSessionId"] == sid
	})
	child := delta["params"].(map[string]any)["sessionId"].(string)
	// An editor opening the running subagent's session sees it running,
	// and what it streamed.
	p.send(req(4, "session/resume", map[string]any{"sessionId": child}))
	if res := result(t, p.until(idIs(4))); res["runningTurnId"] != delta["params"].(map[string]any)["turnId"] || res["readOnly"] != true {
		t.Errorf("resume of the running subagent: running %v readOnly %v", res["runningTurnId"], res["readOnly"])
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	close(hold)

	p2 := initialized(t, home, m)
	p2.send(req(2, "session/resume", map[string]any{"sessionId": sid}))
	res := result(t, p2.until(idIs(2)))
	var call map[string]any
	var turnEnd string
	for _, h := range res["history"].([]any) {
		h := h.(map[string]any)
		switch {
		case h["callId"] == "call_d" && h["type"] == "toolCall":
			call = h
		case h["type"] == "turn":
			turnEnd = str(h["status"]) + ": " + str(h["error"])
		}
	}
	sub, _ := call["subagent"].(map[string]any)
	if call["status"] != "unknown" || !strings.Contains(str(call["output"]), child) || sub["sessionId"] != child || sub["mode"] != "agent" {
		t.Errorf("the delegate call after kill -9: %v", call)
	}
	if turnEnd != "failed: kin stopped during this turn" {
		t.Errorf("the parent's turn after kill -9: %q", turnEnd)
	}
	p2.send(req(3, "session/resume", map[string]any{"sessionId": child}))
	res = result(t, p2.until(idIs(3)))
	var got []string
	for _, h := range res["history"].([]any) {
		h := h.(map[string]any)
		got = append(got, h["type"].(string)+":"+str(h["text"])+str(h["status"])+str(h["error"]))
	}
	if want := "user:" + task + "|assistant:working on |turn:failedkin stopped during this turn"; strings.Join(got, "|") != want {
		t.Errorf("the subagent's history after kill -9:\n got %q\nwant %q", strings.Join(got, "|"), want)
	}
	if res["readOnly"] != true || !strings.Contains(str(res["readOnlyReason"]), "subagent") {
		t.Errorf("the subagent's session: readOnly %v %v", res["readOnly"], res["readOnlyReason"])
	}
	p2.send(req(4, "turn/start", map[string]any{"sessionId": sid, "input": "what happened?"}))
	p2.until(idIs(4))
	ack := p2.until(method("approval/request"))["params"].(map[string]any)
	if ack["kind"] != "acknowledge_unknown" || !strings.Contains(str(ack["title"]), "delegate") {
		t.Errorf("the next question asked %v", ack)
	}
}
