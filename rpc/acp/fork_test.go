package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// addUnstableFork puts ACP's unstable session/fork into the schema kin's
// frames are checked against, from the unstable schema the same package
// ships beside it: kin offers it behind the session.fork capability.
func addUnstableFork(doc map[string]any) error {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(schemaPath()), "schema.unstable.json"))
	if err != nil {
		return err
	}
	var un struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(b, &un); err != nil {
		return err
	}
	defs := doc["$defs"].(map[string]any)
	for _, name := range []string{"ForkSessionRequest", "ForkSessionResponse", "SessionForkCapabilities"} {
		if un.Defs[name] == nil {
			return os.ErrNotExist
		}
		defs[name] = un.Defs[name]
	}
	caps := defs["SessionCapabilities"].(map[string]any)["properties"].(map[string]any)
	caps["fork"] = un.Defs["SessionCapabilities"].(map[string]any)["properties"].(map[string]any)["fork"]
	props := defs["ForkSessionResponse"].(map[string]any)["properties"].(map[string]any)
	props["models"] = map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/SessionModelState"}, map[string]any{"type": "null"}}}
	// The request's unstable fields kin does not take (systemPrompt …)
	// may name definitions the stable schema lacks: kin never sends a
	// request, so only the response must resolve.
	req := defs["ForkSessionRequest"].(map[string]any)["properties"].(map[string]any)
	for k := range req {
		switch k {
		case "sessionId", "cwd", "additionalDirectories", "mcpServers", "_meta":
		default:
			delete(req, k)
		}
	}
	return nil
}

// session/fork is offered behind its capability, and forks the whole
// history into a session that then goes its own way.
func TestSessionForkOfferedAndForked(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	init := c.initialize(nil)
	if init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatal("session.fork is not offered")
	}
	w.model.Script(
		modeltest.Reply{Text: []string{"first answer"}},
		modeltest.Reply{Text: []string{"fork answer"}},
	)
	sid := c.newSession()
	c.prompt(sid, text("the first question"))
	var f ForkSessionResponse
	c.call(MethodSessionFork, ForkSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, &f)
	if f.SessionID == "" || f.SessionID == sid || f.Modes == nil {
		t.Fatalf("fork %+v", f)
	}
	c.prompt(f.SessionID, text("the fork's question"))
	reqs := w.model.Requests()
	last := reqs[len(reqs)-1].Text()
	if !strings.Contains(last, "the first question") || !strings.Contains(last, "the fork's question") {
		t.Errorf("the fork's request: %s", last)
	}
	if err := c.tryCall(MethodSessionFork, ForkSessionRequest{SessionID: "s_nope", Cwd: w.ws, MCPServers: []MCPServer{}}, nil); err == nil {
		t.Error("a fork of no session succeeded")
	}
}
