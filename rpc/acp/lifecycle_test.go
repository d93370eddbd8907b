package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/settings"
)

// session/close while a prompt runs (ACP: "The Agent MUST cancel any
// ongoing work for that session as if session/cancel had been called"):
// the running command is killed, the prompt answers cancelled, close
// answers, no prompt starts on the closed session, and the connection
// closes cleanly when the client goes (Serve returns).
func TestCloseDuringAPromptAnswersItCancelled(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once")
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_sleep", Name: "bash", Arguments: `{"command":"echo started; sleep 600"}`}}})

	p := c.promptAsync(sid, text("wait a while"))
	c.awaitRunning("call_sleep")
	c.call(MethodSessionClose, SessionIDRequest{SessionID: sid}, nil)
	p.wantCancelled(t, "session/close")
	if s, meta := c.lastCallStatus("call_sleep"); s == StatusInProgress {
		t.Errorf("the command's card still runs: %v", meta)
	}
	err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("again")}}, nil)
	if code := rpcCode(t, err); code != CodeResourceNotFound {
		t.Errorf("a prompt on the closed session: %d %v", code, err)
	}
	c.close() // returns once Serve returned: kin let go of everything
}

// A prompt still starting (the launch approval of a client's MCP server
// waits) is stopped by session/close the same way.
func TestCloseWhileThePromptIsStartingAnswersItCancelled(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	asked, never := make(chan struct{}, 1), make(chan struct{})
	t.Cleanup(func() { close(never) })
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked <- struct{}{}
		<-never // nobody answers the launch
		return nil, &jsonrpc2.Error{Code: -32603, Message: "gone"}
	})
	var res NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": c.ws, "mcpServers": []any{map[string]any{"name": "never", "command": "/bin/true", "args": []any{}, "env": []any{}}}}, &res)
	p := c.promptAsync(res.SessionID, text("hi"))
	<-asked
	c.call(MethodSessionClose, SessionIDRequest{SessionID: res.SessionID}, nil)
	p.wantCancelled(t, "session/close while it started")
}

// Deleting a session that never existed, or one already deleted,
// succeeds silently (ACP's session/delete: it "SHOULD succeed silently").
func TestDeletingAnUnknownOrDeletedSessionSucceeds(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	c.call(MethodSessionDelete, SessionIDRequest{SessionID: sid}, nil)
	c.call(MethodSessionDelete, SessionIDRequest{SessionID: sid}, nil)
	c.call(MethodSessionDelete, SessionIDRequest{SessionID: "s_20260101T000000_000000"}, nil)
	c.call(MethodSessionDelete, SessionIDRequest{SessionID: "not-an-id"}, nil)
	if _, err := os.Stat(filepath.Join(w.home, "sessions", sid+".jsonl")); !os.IsNotExist(err) {
		t.Errorf("the session's log is still there: %v", err)
	}
	var list ListSessionsResponse
	c.call(MethodSessionList, ListSessionsRequest{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("listed after delete: %+v", list.Sessions)
	}
	if err := c.tryCall(MethodSessionDelete, map[string]any{}, nil); rpcCode(t, err) != -32602 {
		t.Errorf("a delete without a sessionId: %v", err)
	}
}

// The client's stdin closing while a prompt runs ends the turn and kin
// returns (it does not wait for ever on a prompt nobody can answer).
func TestStdinClosingDuringAPromptEndsKin(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once")
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_sleep", Name: "bash", Arguments: `{"command":"sleep 600"}`}}})
	id := jsonrpc2.ID{Str: "p1", IsString: true}
	if _, err := c.conn.DispatchCall(context.Background(), MethodSessionPrompt,
		map[string]any{"sessionId": sid, "prompt": []any{text("wait")}}, jsonrpc2.PickID(id)); err != nil {
		t.Fatal(err)
	}
	c.awaitRunning("call_sleep")
	done := make(chan struct{})
	go func() { c.close(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("kin did not return after the client went away mid-prompt")
	}
}

// logout forgets the key `kin login` stored: new sessions and prompts are
// then auth_required, naming what to do; once the person signs in again,
// authenticate finds the new key and the open session goes on with it. A
// key in kin's environment is not forgotten, and the answer says so.
func TestLogoutForgetsTheStoredKey(t *testing.T) {
	w := newWorld(t)
	w.settings(`{"openaiApiKey":"sk-stored","openaiBaseUrl":"` + w.model.URL() + `"}`)
	c := w.connect(map[string]string{})
	init := c.initialize(nil)
	if init.AgentCapabilities.Auth == nil || init.AgentCapabilities.Auth.Logout == nil {
		t.Fatalf("logout is not advertised: %+v", init.AgentCapabilities)
	}
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"signed in"}})
	c.prompt(sid, text("hi"))

	var out LogoutResponse
	c.call(MethodLogout, map[string]any{}, &out)
	b, _ := os.ReadFile(filepath.Join(w.home, "settings.json"))
	if strings.Contains(string(b), "sk-stored") || !strings.Contains(string(b), w.model.URL()) {
		t.Errorf("settings after logout: %s", b)
	}
	err := c.tryCall(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}}, nil)
	if rpcCode(t, err) != CodeAuthRequired || !strings.Contains(err.Error(), "kin login") {
		t.Errorf("session/new after logout: %v", err)
	}
	before := len(w.model.Requests())
	if err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("still there?")}}, nil); rpcCode(t, err) != CodeAuthRequired {
		t.Errorf("a prompt after logout: %v", err)
	}
	if len(w.model.Requests()) != before {
		t.Error("a prompt after logout reached the model")
	}

	// Signing in again (kin login stores a new key).
	if err := settings.SaveModel(w.home, settings.Model{APIKey: "sk-new"}); err != nil {
		t.Fatal(err)
	}
	c.call(MethodAuthenticate, AuthenticateRequest{MethodID: AuthMethodLogin}, nil)
	w.model.Script(modeltest.Reply{Text: []string{"back"}})
	if res := c.prompt(sid, text("and now?")); res.StopReason != StopEndTurn {
		t.Fatalf("the prompt after signing in again: %q", res.StopReason)
	}
	reqs := w.model.Requests()
	if auth := reqs[len(reqs)-1].Authorization; auth != "Bearer sk-new" {
		t.Errorf("the request after signing in again carried %q", auth)
	}
	c.close()

	// With the key in the environment, logout leaves it in use.
	c2 := w.connect(nil)
	c2.initialize(nil)
	c2.call(MethodLogout, map[string]any{}, &out)
	if msg, _ := out.Meta["kin"].(map[string]any)["message"].(string); !strings.Contains(msg, "OPENAI_API_KEY") {
		t.Errorf("logout with an environment key says %q", msg)
	}
	c2.newSession()
}
