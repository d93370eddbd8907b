package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// How a prompt ends when it does not simply end: withdrawn by
// $/cancel_request, failed, or its approval cancelled.

// lastCallStatus is the status of a tool call's last report.
func (c *client) lastCallStatus(callID string) (status string, meta map[string]any) {
	for _, u := range c.updates("") {
		if u["toolCallId"] != callID {
			continue
		}
		if s, ok := u["status"].(string); ok {
			status = s
		}
		if m, ok := u["_meta"].(map[string]any); ok {
			meta = m
		}
	}
	return status, meta
}

// awaitRunning waits until a call's card says it runs.
func (c *client) awaitRunning(callID string) {
	c.t.Helper()
	c.until(callID+" running", func() bool {
		s, _ := c.lastCallStatus(callID)
		return s == StatusInProgress
	})
}

// A prompt the client withdraws with $/cancel_request ends its turn (the
// running command is killed) and answers cancelled; the session goes on.
func TestCancelRequestEndsThePromptCancelled(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once")
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_sleep", Name: "bash", Arguments: `{"command":"sleep 600"}`}}})

	id := jsonrpc2.ID{Str: "prompt_1", IsString: true}
	call, err := c.conn.DispatchCall(context.Background(), MethodSessionPrompt,
		map[string]any{"sessionId": sid, "prompt": []any{text("wait a while")}}, jsonrpc2.PickID(id))
	if err != nil {
		t.Fatal(err)
	}
	c.awaitRunning("call_sleep")
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
	if s, _ := c.lastCallStatus("call_sleep"); s == StatusInProgress {
		t.Error("the command is still reported running after the prompt ended")
	}
	w.model.Script(modeltest.Reply{Text: []string{"still here"}})
	if res := c.prompt(sid, text("are you there?")); res.StopReason != StopEndTurn {
		t.Errorf("the next prompt: %q", res.StopReason)
	}
}

// A turn that fails answers session/prompt with a JSON-RPC error carrying
// kin's message (the model service's words in it); the session goes on.
func TestAFailedTurnIsAnErrorWithKinsMessage(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	w.model.Script(modeltest.Reply{HTTPStatus: 400, ErrorMessage: "this request is too long for the model"})
	err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("hello")}}, nil)
	if err == nil {
		t.Fatal("a failed turn answered without an error")
	}
	if code := rpcCode(t, err); code != rpc.CodeInternalError || !strings.Contains(err.Error(), "this request is too long for the model") {
		t.Errorf("code %d: %v", code, err)
	}
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	if res := c.prompt(sid, text("again")); res.StopReason != StopEndTurn {
		t.Errorf("the next prompt: %q", res.StopReason)
	}
}

// A permission request answered "cancelled" denies: the command never
// runs, its card ends failed with kin's status denied, and the model is
// told.
func TestACancelledPermissionOutcomeDenies(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	asked := 0
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked++
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	})
	sid := c.newSession()
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_touch", Name: "bash", Arguments: `{"command":"echo ran > ran.txt"}`}}},
		modeltest.Reply{Text: []string{"Not allowed."}},
	)
	if res := c.prompt(sid, text("make ran.txt")); res.StopReason != StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if asked != 1 {
		t.Errorf("asked %d times", asked)
	}
	if _, err := os.Stat(filepath.Join(w.ws, "ran.txt")); !os.IsNotExist(err) {
		t.Errorf("the command ran (%v)", err)
	}
	status, meta := c.lastCallStatus("call_touch")
	if kin, _ := meta["kin"].(map[string]any); status != StatusFailed || kin["status"] != "denied" {
		t.Errorf("the card ended %q with %v", status, meta)
	}
	reqs := w.model.Requests()
	if out, ok := reqs[len(reqs)-1].LastToolOutput(); !ok || !strings.Contains(strings.ToLower(out), "denied") {
		t.Errorf("the model was told %q", out)
	}
}
