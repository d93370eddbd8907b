package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// Attack: the model sends a call whose arguments are one JSON object
// followed by more ({"task":"..."} x). kin's own tools decode the first
// value and ignore the rest, but a hook's input cannot carry arguments
// that are not JSON: every PreToolUse hook failed ("blocks nothing"), and
// the call ran past the person's hook that denies it. A call whose
// arguments are not one JSON value now runs nothing, and no hook is
// skipped.
func TestArgumentsThatAreNotJSONRunNothing(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		_, _ = io.WriteString(w, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no subagents here"}}`)
	}))
	defer srv.Close()
	svc, m, rec, _, ws := hookService(t, map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": ".*", "hooks": []any{
		map[string]any{"type": "http", "url": srv.URL}}}}}})
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "d1", Name: DelegateToolName, Arguments: `{"task":"look around"} {"mode":"agent"}`}}},
		modeltest.Reply{Text: []string{"done"}},
		modeltest.Reply{Text: []string{"done again"}},
	)
	if d := ask(t, svc, rec, sid, TextInput("go")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	for _, r := range m.Requests() {
		if strings.Contains(r.Instructions, "You are a subagent") {
			t.Fatalf("a subagent ran past the hook that denies it")
		}
	}
	reqs := m.Requests()
	if out, ok := reqs[len(reqs)-1].LastToolOutput(); !ok || !strings.Contains(out, "not valid JSON") {
		t.Errorf("the model reads %q", out)
	}
	for _, n := range rec.notices {
		if n.Source == "hooks" && strings.Contains(n.Message, "invalid character") {
			t.Errorf("a hook failed on the call's input: %s", n.Message)
		}
	}
}
