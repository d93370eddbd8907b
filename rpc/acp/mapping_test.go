package acp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

func rpcCode(t *testing.T, err error) int64 {
	t.Helper()
	var re *jsonrpc2.Error
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return re.Code
}

// Requests that are not tool calls (a server launch, an unknown outcome to
// acknowledge) get a card of their own, in the schema's shapes, before the
// person is asked, and it is closed with the answer.
func TestApprovalsThatAreNotToolCallsHaveTheirOwnCard(t *testing.T) {
	launch := permission.Request{RequestID: "ap_1", SessionID: "s", Kind: permission.KindLaunch, Transport: "stdio", Scope: "client",
		Approval: tool.Approval{Title: "Start MCP server fs", Server: "fs", Destination: "npx fs-server", Warning: "This server's command changed."}}
	launch.Options = permission.OptionsFor(launch)
	ack := permission.Request{RequestID: "ap_2", SessionID: "s", CallID: "call_x", Kind: permission.KindAcknowledge,
		Approval: tool.Approval{Title: "bash may already have run", Warning: "The outcome of bash is unknown."}}
	ack.Options = permission.OptionsFor(ack)
	// what a folder brings, asked through session/request_permission
	trust := permission.Request{RequestID: "ap_3", SessionID: "s", TurnID: "t", Kind: permission.KindProjectTrust,
		Approval: tool.Approval{Title: "Trust 1 item(s) this folder brings?", Warning: "kin uses none of them until you trust them."},
		Items:    []permission.TrustItem{{Kind: "hook", Path: ".kin/hooks.json PreToolUse[0].hooks[0]", Name: "PreToolUse Bash", Digest: "sha256:aa", Detail: "sh .kin/check.sh", Changed: true}}}
	trust.Options = permission.OptionsFor(trust)
	for _, req := range []permission.Request{launch, ack, trust} {
		card := syntheticToolCall(req)
		if card.ToolCallID != "kin_"+req.RequestID || card.Title == "" {
			t.Errorf("%s: card %+v", req.Kind, card)
		}
		p := permissionRequest(req)
		if p.ToolCall.ToolCallID != card.ToolCallID {
			t.Errorf("%s: the request is about %q, the card is %q", req.Kind, p.ToolCall.ToolCallID, card.ToolCallID)
		}
		if first := p.ToolCall.Content[0].Content.Text; !strings.HasPrefix(first, "⚠ ") {
			t.Errorf("%s: kin's warning is not the leading block: %q", req.Kind, first)
		}
		for def, v := range map[string]any{
			"SessionNotification":      SessionNotification{SessionID: "s", Update: card},
			"RequestPermissionRequest": p,
		} {
			if err := validate(t, def, v); err != nil {
				t.Errorf("%s: %s: %v", req.Kind, def, err)
			}
		}
		done := syntheticDone(req, permission.Deny, permission.ReasonCancelled)
		if done.Status != StatusFailed {
			t.Errorf("%s: a denied card is %q", req.Kind, done.Status)
		}
		if err := validate(t, "SessionNotification", SessionNotification{SessionID: "s", Update: done}); err != nil {
			t.Errorf("%s: done: %v", req.Kind, err)
		}
	}
	if got := permissionRequest(trust).ToolCall.Content; !strings.Contains(got[len(got)-1].Content.Text, "hook .kin/hooks.json PreToolUse[0].hooks[0] (changed since you trusted it): sh .kin/check.sh") {
		t.Errorf("the trust request does not list its items: %+v", got)
	}
	if got := syntheticToolCall(launch).Content; !strings.Contains(got[len(got)-1].Content.Text, "npx fs-server") {
		t.Errorf("the launch card does not show the command: %+v", got)
	}
}

func TestToolCallStatusesAndKinds(t *testing.T) {
	for kin, want := range map[string]string{
		agent.CallPending: StatusPending, agent.CallAwaitingApproval: StatusPending, agent.CallRunning: StatusInProgress,
		"completed": StatusCompleted, "output_limit": StatusCompleted, "failed": StatusFailed, "denied": StatusFailed, "unknown": StatusFailed,
	} {
		if got := statusOf(kin); got != want {
			t.Errorf("statusOf(%q) = %q, want %q", kin, got, want)
		}
	}
	if kindOf("search", tool.KindRead) != "search" || kindOf("mcp__x__y", "") != "other" || kindOf("bash", tool.KindExecute) != "execute" {
		t.Error("kinds")
	}
	u := toolCallUpdate(agent.ToolCall{CallID: "c", Name: "read_file", Kind: tool.KindRead, Arguments: `{"path":"src/a.go"}`, Status: "denied"}, true, "/ws")
	if u.Title != "read_file src/a.go" || u.Meta["kin"].(map[string]any)["status"] != "denied" || u.Locations[0].Path != "/ws/src/a.go" {
		t.Errorf("update %+v", u)
	}
}

func TestPromptBlocks(t *testing.T) {
	w := newWorld(t)
	w.write("in.txt", "INSIDE-CANARY\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	link := func(p string) map[string]any {
		return map[string]any{"type": "resource_link", "name": filepath.Base(p), "uri": "file://" + p}
	}
	if res := c.prompt(sid, text("read this"), link(filepath.Join(w.ws, "in.txt"))); res.StopReason != StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if got := w.model.Requests()[0].LastUserText(); !strings.Contains(got, "INSIDE-CANARY") || !strings.Contains(got, "read this") {
		t.Errorf("the model was asked %q", got)
	}
	for name, block := range map[string]any{
		"outside the workspace":  link(outside),
		"audio":                  map[string]any{"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
		"image of no known type": map[string]any{"type": "image", "data": "AA==", "mimeType": "image/x-art"},
		"binary resource":        map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x.bin", "blob": "AP8="}},
	} {
		err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("x"), block}}, nil)
		if code := rpcCode(t, err); code != -32602 {
			t.Errorf("%s: code %d (%v)", name, code, err)
		}
		if strings.Contains(err.Error(), "OUTSIDE") {
			t.Errorf("%s: the error shows the file: %v", name, err)
		}
	}
	if n := len(w.model.Requests()); n != 1 {
		t.Errorf("a refused prompt reached the model (%d requests)", n)
	}
}

func TestNoKeyIsAuthRequiredNamingWhatToSet(t *testing.T) {
	w := newWorld(t)
	c := w.connect(map[string]string{})
	init := c.initialize(nil)
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].Type != "" {
		t.Errorf("a client without terminal sign-in is offered %+v", init.AuthMethods)
	}
	err := c.tryCall(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}}, nil)
	if rpcCode(t, err) != CodeAuthRequired || !strings.Contains(err.Error(), "OPENAI_API_KEY") || !strings.Contains(err.Error(), "kin login") {
		t.Errorf("session/new: %v", err)
	}
	if err := c.tryCall(MethodAuthenticate, AuthenticateRequest{MethodID: AuthMethodLogin}, nil); rpcCode(t, err) != CodeAuthRequired {
		t.Errorf("authenticate: %v", err)
	}
	// session/list needs no key.
	var list ListSessionsResponse
	c.call(MethodSessionList, map[string]any{}, &list)
}

// session/load replays, then asks again what still waits: an approval
// whose first request_permission a reloaded client never answered.
func TestLoadAsksAgainWhatIsPending(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	asked := make(chan json.RawMessage, 4)
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		asked <- p
		select {} // never answers: the client "reloads"
	})
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_sh", Name: "bash", Arguments: `{"command":"echo hi"}`}}}, modeltest.Reply{Text: []string{"done"}})
	done := make(chan error, 1)
	go func() {
		done <- c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("run")}}, nil)
	}()
	<-asked
	c.answer("allow_once")
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var users int
	for _, u := range c.updates(UpdateUserMessage) {
		if u["content"].(map[string]any)["text"] == "run" {
			users++
		}
	}
	if users != 1 {
		t.Errorf("the question was replayed %d times", users)
	}
	last := c.updates(UpdateToolCallUpdate)
	if st := last[len(last)-1]["status"]; st != StatusCompleted {
		t.Errorf("the call ended %v after the second ask was answered", st)
	}
}

func TestAWriteThroughTheClientIsCheckedAgainstWhatItHolds(t *testing.T) {
	w := newWorld(t)
	path := w.write("a.txt", "one\n")
	c := w.connect(nil)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
	writes, reads := 0, 0
	c.on(MethodReadTextFile, func(json.RawMessage) (any, error) {
		reads++
		if reads == 1 { // what the diff is shown against
			return ReadTextFileResponse{Content: "one\n"}, nil
		}
		return ReadTextFileResponse{Content: "changed in the editor meanwhile\n"}, nil
	})
	c.on(MethodWriteTextFile, func(json.RawMessage) (any, error) { writes++; return struct{}{}, nil })
	c.answer("allow_once")
	sid := c.newSession()
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_w", Name: "write_file", Arguments: `{"path":"a.txt","content":"two\n"}`}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	c.prompt(sid, text("write"))
	if writes != 0 {
		t.Errorf("kin wrote over the editor's content %d times", writes)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\n" {
		t.Errorf("the disk was written: %q", b)
	}
	last := c.updates(UpdateToolCallUpdate)
	if st := last[len(last)-1]["status"]; st != StatusFailed {
		t.Errorf("the write ended %v", st)
	}
}

// syncBuffer is a trace that tests read while kin writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTheTraceHoldsNoFileContentNorSecrets(t *testing.T) {
	w := newWorld(t)
	trace := &syncBuffer{}
	w.trace = trace
	w.write("a.txt", "FILE-CANARY\n")
	c := w.connect(nil)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}})
	c.on(MethodReadTextFile, func(json.RawMessage) (any, error) { return ReadTextFileResponse{Content: "FILE-CANARY\n"}, nil })
	c.on(MethodWriteTextFile, func(json.RawMessage) (any, error) { return struct{}{}, nil })
	c.answer("allow_once")
	var ns NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{map[string]any{"name": "s", "command": "true", "args": []string{},
		"env": []any{map[string]any{"name": "TOKEN", "value": "ENV-SECRET-CANARY"}}}}}, &ns)
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "write_file", Arguments: `{"path":"a.txt","content":"WRITTEN-CANARY\n"}`}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	c.prompt(ns.SessionID, text("write"), map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x", "text": "EMBEDDED-CANARY"}})
	got := trace.String()
	if !strings.Contains(got, MethodReadTextFile) || !strings.Contains(got, MethodWriteTextFile) {
		t.Fatalf("the trace misses the fs requests:\n%s", got)
	}
	// The diffs a person is shown stay in the trace, as kin serve's
	// approval/request does; what kin reads and writes through the client
	// and what the prompt embeds do not.
	var fsLines []string
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, `"id":"fs_`) || strings.Contains(l, MethodSessionPrompt) {
			fsLines = append(fsLines, l)
		}
	}
	// The call's arguments (rawInput) are shown too, as turn/toolCall's.
	fsOnly := strings.Join(fsLines, "\n")
	for _, canary := range []string{"FILE-CANARY", "WRITTEN-CANARY"} {
		if strings.Contains(fsOnly, canary) {
			t.Errorf("an fs/* message or the prompt in the trace holds %s", canary)
		}
	}
	for _, canary := range []string{"EMBEDDED-CANARY", "ENV-SECRET-CANARY"} {
		if strings.Contains(got, canary) {
			t.Errorf("the trace holds %s", canary)
			for _, l := range strings.Split(got, "\n") {
				if strings.Contains(l, canary) {
					t.Log(l[:min(len(l), 400)])
				}
			}
		}
	}
}

// An MCP server's form reaches the client in ACP's restricted schema:
// every field kind kin reads (ask.Field) is one the schema takes.
func TestFormsAreInACPsSchema(t *testing.T) {
	one, three := 1, 3
	lo, hi := 0.0, 10.0
	fields := []ask.Field{
		{Name: "name", Title: "Name", Type: ask.TypeString, Required: true, MinLength: &one, Format: ask.FormatEmail, Default: "a@b.c"},
		{Name: "count", Type: ask.TypeInteger, Minimum: &lo, Maximum: &hi},
		{Name: "ratio", Type: ask.TypeNumber},
		{Name: "ok", Type: ask.TypeBoolean, Default: true},
		{Name: "color", Type: ask.TypeEnum, Choices: []ask.Choice{{Value: "r"}, {Value: "g"}}},
		{Name: "size", Type: ask.TypeEnum, Choices: []ask.Choice{{Value: "s", Title: "Small"}, {Value: "l", Title: "Large"}}},
		{Name: "tags", Type: ask.TypeMultiSelect, Choices: []ask.Choice{{Value: "x"}, {Value: "y"}}, MaxItems: &three},
		{Name: "langs", Type: ask.TypeMultiSelect, Choices: []ask.Choice{{Value: "go", Title: "Go"}}},
	}
	req := CreateElicitationRequest{SessionID: "s", Mode: "form", Message: "srv asks: details?", RequestedSchema: formSchema(fields)}
	if err := validate(t, "CreateElicitationRequest", req); err != nil {
		t.Fatal(err)
	}
	link := CreateElicitationRequest{SessionID: "s", Mode: "url", Message: "sign in", URL: "https://example.com/auth", ElicitationID: "el_1"}
	if err := validate(t, "CreateElicitationRequest", link); err != nil {
		t.Fatal(err)
	}
}
