package rpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A form of the current elicitation schema reaches the editor with every
// field kind; an answer that does not fit is refused with -32602 naming
// the field, the question stays open, and the corrected answer is what the
// server gets.
func TestElicitationFormAnswerIsChecked(t *testing.T) {
	w := newWorld(t, map[string]any{"profile": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, profileServer())}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "allow_once")
	ed.Wait("mcp/status", rpctest.Field("state", "connected"))
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "p1", Name: "mcp__profile__update-profile", Arguments: "{}"}}}, modeltest.Reply{Text: []string{"done"}})
	allowEveryApproval(ed)
	sid := newSession(t, ed)
	tid := start(t, ed, sid, "update my profile")
	var el rpc.ElicitationRequest
	raw := ed.Wait("elicitation/request", nil)
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &el); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, f := range el.Fields {
		kinds[f.Name] = f.Type
	}
	if kinds["fish"] != "multi_select" || kinds["tags"] != "multi_select" || kinds["hero"] != "enum" || kinds["email"] != "string" || len(kinds) != 9 {
		t.Fatalf("fields %+v", el.Fields)
	}
	for _, tc := range []struct {
		content map[string]any
		want    string
	}{
		{map[string]any{"name": "Ana", "fish": []string{"fish-1", "fish-2", "fish-3"}}, `"fish" allows at most 2 choices`},
		{map[string]any{"name": "Ana", "email": "not-an-address"}, `"email" must be an email address`},
		{map[string]any{"fish": []string{"fish-1"}}, `"name" is required`},
	} {
		code, msg := ed.CallErr("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept", Content: tc.content})
		if code != rpc.CodeInvalidParams || !strings.Contains(msg, tc.want) {
			t.Errorf("%v: %d %q", tc.content, code, msg)
		}
	}
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept",
		Content: map[string]any{"name": "Ana", "fish": []string{"fish-3", "fish-1"}, "age": 31}}, nil)
	ed.Wait("turn/completed", rpctest.Field("turnId", tid))
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "p1"), rpctest.Field("status", "completed")))
	// The SDK fills in the defaults of what was left out (hero, subscribe).
	if out := fmt.Sprint(call["output"]); !strings.Contains(out, `accept: {"age":31,"fish":["fish-3","fish-1"],"hero":"hero-1","name":"Ana","subscribe":false}`) {
		t.Errorf("the server got %s", out)
	}
	if n := len(ed.Notes("elicitation/resolved")); n != 1 {
		t.Errorf("%d resolutions", n)
	}
}
