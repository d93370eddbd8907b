package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// session/load asks again an approval that is not a tool call (here what
// the folder brings: a hook to trust) with its card first, as it was first
// asked: the replay does not carry that card, and a request_permission
// about a tool call the client was never told of is one it cannot place.
func TestLoadAsksAgainAnApprovalOfItsOwnCardWithTheCard(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
		"hooks": []any{map[string]any{"type": "command", "command": "sh .kin/check.sh"}}}}}})
	w.write(".kin/hooks.json", string(h))
	c := w.connect(nil)
	c.initialize(nil)
	asked := make(chan string, 4)
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		var r RequestPermissionRequest
		_ = json.Unmarshal(p, &r)
		asked <- r.ToolCall.ToolCallID
		select {} // never answers: the client "reloads"
	})
	sid := c.newSession()
	c.promptAsync(sid, text("run"))
	first := <-asked
	if first == "" || first[:4] != "kin_" {
		t.Fatalf("the trust request is about %q, not a card of its own", first)
	}
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	if again := <-asked; again != first {
		t.Fatalf("asked again about %q, first about %q", again, first)
	}
	cards := 0
	for _, u := range c.updates(UpdateToolCall) {
		if u["toolCallId"] == first {
			cards++
		}
	}
	if cards != 2 {
		t.Errorf("the card %s was sent %d times (once when first asked, once on load, before the request): want 2", first, cards)
	}
}

// A configured server's launch (a question of no session) asked in the
// session a client reloads is asked again there, with its card: the
// prompt waits for it, and the reloaded client no longer shows it.
func TestLoadAsksAgainALaunchAskedInTheSession(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"never": map[string]any{"command": "/bin/true"}}})
	w.write(".kin/mcp.json", string(cfg))
	c := w.connect(nil)
	c.initialize(nil)
	asked := make(chan string, 4)
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		var r RequestPermissionRequest
		_ = json.Unmarshal(p, &r)
		asked <- r.SessionID + " " + r.ToolCall.ToolCallID
		select {} // never answers: the client "reloads"
	})
	sid := c.newSession()
	c.promptAsync(sid, text("run"))
	first := <-asked
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	select {
	case again := <-asked:
		if again != first {
			t.Fatalf("asked again as %q, first as %q", again, first)
		}
	case <-time.After(wait): // a hang, not a timing goal
		t.Fatal("the launch the prompt waits for was not asked again on session/load")
	}
}
