package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A spend limit reaches an ACP client as session/request_permission with
// the three choices by kind; "stop" (reject_once) ends the prompt with
// max_turn_requests and nothing is sent; usage_update carries the
// session's cost. Every frame is checked against ACP's schema.
func TestALimitIsAskedOverRequestPermissionAndUsageUpdateCarriesTheCost(t *testing.T) {
	acpSchema(t)
	w := newWorld(t)
	w.settings(`{"limits":{"sessionTokens":3000,"currency":"EUR","prices":{"mock":{"input":2,"output":8}}}}`)
	c := w.connect(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.model.URL(), "KIN_MODEL": "mock"})
	c.initialize(map[string]any{})
	var asked []RequestPermissionRequest
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		var r RequestPermissionRequest
		_ = json.Unmarshal(p, &r)
		c.mu.Lock()
		asked = append(asked, r)
		c.mu.Unlock()
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "deny"}}, nil
	})
	w.model.Script(modeltest.Reply{Text: []string{"first"}, Usage: modeltest.Usage{Input: 2500, Output: 100}},
		modeltest.Reply{Text: []string{"never sent"}})
	sid := c.newSession()
	if res := c.prompt(sid, text("one")); res.StopReason != StopEndTurn {
		t.Fatalf("the first prompt: %q", res.StopReason)
	}
	if res := c.prompt(sid, text("two")); res.StopReason != StopMaxTurnRequests {
		t.Fatalf("the prompt stopped at the limit: %q", res.StopReason)
	}
	if n := len(w.model.Requests()); n != 1 {
		t.Errorf("%d model requests", n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times", len(asked))
	}
	var kinds []string
	for _, o := range asked[0].Options {
		kinds = append(kinds, o.OptionID+":"+o.Kind)
	}
	if strings.Join(kinds, " ") != "allow_once:allow_once allow_always:allow_always deny:reject_once" ||
		!strings.Contains(asked[0].ToolCall.Title, "limits.sessionTokens") {
		t.Errorf("request_permission %+v", asked[0])
	}
	cost := false
	for _, f := range c.frames {
		checkFrame(t, f)
		if f.Method == NotifySessionUpdate && strings.Contains(string(f.Params), `"usage_update"`) &&
			strings.Contains(string(f.Params), `"cost":{"amount":0.0058,"currency":"EUR"}`) {
			cost = true
		}
	}
	if !cost {
		t.Error("no usage_update with the session's cost")
	}
}
