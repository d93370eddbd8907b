package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// A prompt still starting because a configured server's launch waits for
// the person (a question of no session, asked in the prompt's session) is
// stopped by session/cancel as one of the session's own servers is: the
// client that cancelled need not answer the launch for its prompt to end.
func TestCancelWhileAConfiguredServersLaunchWaitsAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"never": map[string]any{"command": "/bin/true"}}})
	w.write(".kin/mcp.json", string(cfg))
	c := w.connect(nil)
	c.initialize(nil)
	asked, never := make(chan struct{}, 4), make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-never // nobody answers
		return nil, &jsonrpc2.Error{Code: -32603, Message: "gone"}
	})
	var res NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": c.ws, "mcpServers": []any{}}, &res)
	p := c.promptAsync(res.SessionID, text("hi"))
	<-asked
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: res.SessionID})
	p.wantCancelled(t, "session/cancel while a configured server's launch waited")
}

// The same prompt withdrawn with $/cancel_request: its launch question is
// refused and it answers cancelled.
func TestCancelRequestWhileAConfiguredServersLaunchWaitsAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"never": map[string]any{"command": "/bin/true"}}})
	w.write(".kin/mcp.json", string(cfg))
	c := w.connect(nil)
	c.initialize(nil)
	asked, never := make(chan struct{}, 4), make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-never // nobody answers
		return nil, &jsonrpc2.Error{Code: -32603, Message: "gone"}
	})
	sid := c.newSession()
	call, err := c.conn.DispatchCall(context.Background(), MethodSessionPrompt,
		map[string]any{"sessionId": sid, "prompt": []any{text("hi")}}, jsonrpc2.PickID(jsonrpc2.ID{Str: "prompt_1", IsString: true}))
	if err != nil {
		t.Fatal(err)
	}
	<-asked
	c.notify(NotifyCancelRequest, map[string]any{"requestId": "prompt_1"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res PromptResponse
	if err := call.Wait(ctx, &res); err != nil {
		t.Fatalf("the withdrawn prompt answered %v", err)
	}
	if res.StopReason != StopCancelled {
		t.Errorf("stopReason %q, want cancelled", res.StopReason)
	}
}

// A second session's prompt waits for the configured servers another
// session's prompt is starting; session/cancel of it answers it cancelled
// at once, however long the other session's launch waits.
func TestCancelWhileWaitingForAnotherSessionsLaunchAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"never": map[string]any{"command": "/bin/true"}}})
	w.write(".kin/mcp.json", string(cfg))
	c := w.connect(nil)
	c.initialize(nil)
	asked, never := make(chan struct{}, 4), make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-never // nobody answers
		return nil, &jsonrpc2.Error{Code: -32603, Message: "gone"}
	})
	a, b := c.newSession(), c.newSession()
	c.promptAsync(a, text("hi"))
	<-asked
	p := c.promptAsync(b, text("hi too"))
	time.Sleep(100 * time.Millisecond) // b's prompt waits for a's servers
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: b})
	p.wantCancelled(t, "session/cancel while it waited for another session's launch")
}

// A prompt whose resource_link waits for the configured servers to start
// (to learn whether one offers it) is stopped by session/cancel as well.
func TestCancelWhileAResourceLinkWaitsForALaunchAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"never": map[string]any{"command": "/bin/true"}}})
	w.write(".kin/mcp.json", string(cfg))
	c := w.connect(nil)
	c.initialize(nil)
	asked, never := make(chan struct{}, 4), make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-never // nobody answers
		return nil, &jsonrpc2.Error{Code: -32603, Message: "gone"}
	})
	sid := c.newSession()
	p := c.promptAsync(sid, text("see"), map[string]any{"type": "resource_link", "name": "n", "uri": "notes://x"})
	<-asked
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	p.wantCancelled(t, "session/cancel while its resource_link waited for a launch")
}
