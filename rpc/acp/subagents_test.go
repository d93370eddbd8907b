package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A subagent is no ACP session: its progress is the content of the
// delegate call's tool_call_updates, its approvals session/request_permission
// in the session the client prompted (each on a card of its own), and
// session/list leaves its session out.
func TestSubagentShowsAsTheDelegateCallsContent(t *testing.T) {
	w := newWorld(t)
	w.write("a.go", "package a\n")
	const question, task = "check a.go and note it", "Read a.go, then write notes.txt."
	w.model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Text: []string{"Reading a.go"}, Calls: []modeltest.Call{{ID: "c_read", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_write", Name: "write_file", Arguments: `{"path":"notes.txt","content":"a is a package\n"}`}}},
		modeltest.Reply{Text: []string{"a.go is package a; notes.txt written."}})
	w.model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_d", Name: "delegate", Arguments: `{"task":"` + task + `","mode":"agent"}`}}},
		modeltest.Reply{Text: []string{"Done."}})
	c := w.connect(nil)
	c.initialize(nil)
	var asked []RequestPermissionRequest
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		var r RequestPermissionRequest
		_ = json.Unmarshal(p, &r)
		asked = append(asked, r)
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	})
	sid := c.newSession()
	if res := c.prompt(sid, text(question)); res.StopReason != StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}

	// The delegate call's card streamed the subagent's answer as content.
	var progress, final map[string]any
	for _, u := range c.updates("") {
		if u["toolCallId"] != "call_d" {
			continue
		}
		if u["status"] == StatusInProgress && u["content"] != nil && progress == nil {
			progress = u
		}
		if u["status"] == StatusCompleted {
			final = u
		}
	}
	if progress == nil || !strings.Contains(contentText(progress), "Reading a.go") {
		t.Errorf("no progress of the subagent on the delegate call: %v", progress)
	}
	if final == nil || contentText(final) != "a.go is package a; notes.txt written." {
		t.Errorf("the delegate call's end: %v", final)
	}
	// Its write was asked in this session, on a card of its own.
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	req := asked[0]
	if req.SessionID != sid || !strings.HasPrefix(req.ToolCall.ToolCallID, "kin_ap_") {
		t.Errorf("request_permission: %+v", req)
	}
	var card map[string]any
	for _, u := range c.updates(UpdateToolCall) {
		if u["toolCallId"] == req.ToolCall.ToolCallID {
			card = u
		}
	}
	if card == nil || !strings.HasPrefix(card["title"].(string), "Subagent: ") || card["kind"] != "edit" {
		t.Errorf("the subagent's approval card: %v", card)
	}
	// Nothing of the subagent's session reached the client as a session.
	c.mu.Lock()
	frames := append([]frame(nil), c.frames...)
	c.mu.Unlock() // validate may skip the test: never while holding the lock
	for _, f := range frames {
		if f.Dir != "kin" || f.Method != NotifySessionUpdate {
			continue
		}
		var n SessionNotification
		_ = json.Unmarshal(f.Params, &n)
		if n.SessionID != sid {
			t.Errorf("an update for session %s: %s", n.SessionID, f.Params)
		}
		if err := validate(t, "SessionNotification", json.RawMessage(f.Params)); err != nil {
			t.Errorf("%s: %v", f.Params, err)
		}
	}
	if err := validate(t, "RequestPermissionRequest", req); err != nil {
		t.Errorf("request_permission: %v", err)
	}
	var list ListSessionsResponse
	c.call(MethodSessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
		t.Errorf("session/list: %+v", list.Sessions)
	}
}

func contentText(u map[string]any) string {
	var b strings.Builder
	cs, _ := u["content"].([]any)
	for _, c := range cs {
		m, _ := c.(map[string]any)
		if inner, ok := m["content"].(map[string]any); ok {
			b.WriteString(inner["text"].(string))
		}
	}
	return b.String()
}
