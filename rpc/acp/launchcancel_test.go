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
	c, asked := launchWaits(t)
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
	c, asked := launchWaits(t)
	sid := c.newSession()
	call, err := c.conn.DispatchCall(context.Background(), MethodSessionPrompt,
		map[string]any{"sessionId": sid, "prompt": []any{text("hi")}}, jsonrpc2.PickID(jsonrpc2.ID{Str: "prompt_1", IsString: true}))
	if err != nil {
		t.Fatal(err)
	}
	<-asked
	c.notify(NotifyCancelRequest, map[string]any{"requestId": "prompt_1"})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
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
	c, asked := launchWaits(t)
	a, b := c.newSession(), c.newSession()
	c.promptAsync(a, text("hi"))
	<-asked
	p := c.promptAsync(b, text("hi too"))
	// b's prompt comes to wait for a's servers at a moment nothing shows:
	// a cancel sent before it waits finds no prompt, so it is sent again
	// until the prompt answers (on main it never did).
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for giveUp := time.After(wait); ; {
		c.notify(NotifySessionCancel, SessionIDRequest{SessionID: b})
		select {
		case res := <-p.res:
			if res.StopReason != StopCancelled {
				t.Errorf("the prompt answered %q, want cancelled", res.StopReason)
			}
			return
		case err := <-p.err:
			t.Fatalf("the prompt failed: %v", err)
		case <-giveUp:
			t.Fatal("session/cancel while it waited for another session's launch: the prompt was never answered")
		case <-tick.C:
		}
	}
}

// A prompt whose resource_link waits for the configured servers to start
// (to learn whether one offers it) is stopped by session/cancel as well.
func TestCancelWhileAResourceLinkWaitsForALaunchAnswersCancelled(t *testing.T) {
	c, asked := launchWaits(t)
	sid := c.newSession()
	p := c.promptAsync(sid, text("see"), map[string]any{"type": "resource_link", "name": "n", "uri": "notes://x"})
	<-asked
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	p.wantCancelled(t, "session/cancel while its resource_link waited for a launch")
}

// launchWaits is a connected, initialized client in a workspace whose
// .kin/mcp.json names a server whose launch approval the client never
// answers; asked gets a value each time kin asks it.
func launchWaits(t *testing.T) (c *client, asked chan struct{}) {
	t.Helper()
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.ws, ".kin"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"never": map[string]any{"command": "/bin/true"}}})
	w.write(".kin/mcp.json", string(cfg))
	c = w.connect(nil)
	c.initialize(nil)
	asked, never := make(chan struct{}, 4), make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-never // nobody answers
		return nil, &jsonrpc2.Error{Code: -32603, Message: "gone"}
	})
	return c, asked
}
