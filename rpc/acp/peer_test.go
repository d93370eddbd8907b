package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// Tests of what kin's peer features (issue 15) are in ACP's terms: modes,
// commands, kin's own question, plans on load.

// index is the position of the first frame pred holds for (-1: none).
func (c *client) index(pred func(f frame) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.frames {
		if pred(f) {
			return i
		}
	}
	return -1
}

func isUpdate(kind string) func(f frame) bool {
	return func(f frame) bool {
		if f.Method != NotifySessionUpdate {
			return false
		}
		var n struct {
			Update map[string]any `json:"update"`
		}
		_ = json.Unmarshal(f.Params, &n)
		return n.Update["sessionUpdate"] == kind
	}
}

func modeValue(opts []ConfigOption) string {
	for _, o := range opts {
		if o.ID == configMode {
			return o.CurrentValue
		}
	}
	return ""
}

// The mode is kin's session mode, set either way (session/set_mode, the
// mode config option), announced in both views, applied by the gate from
// the next call and kept with the session for the next process.
func TestModesAreKinsSessionMode(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	asked := 0
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		asked++
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	})
	var s NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{}}, &s)
	if s.Modes == nil || s.Modes.CurrentModeID != "agent" || len(s.Modes.AvailableModes) != 3 || modeValue(s.ConfigOptions) != "agent" {
		t.Fatalf("session/new: modes %+v, options %+v", s.Modes, s.ConfigOptions)
	}

	c.call(MethodSessionSetMode, SetModeRequest{SessionID: s.SessionID, ModeID: "ask"}, nil)
	// Sent before the answer: both views say ask once set_mode returned.
	if m := c.updates(UpdateCurrentMode); len(m) != 1 || m[0]["currentModeId"] != "ask" {
		t.Errorf("current_mode_update after set_mode: %v", m)
	}
	if o := c.updates(UpdateConfigOption); len(o) != 1 || !strings.Contains(mustJSON(t, o[0]), `"currentValue":"ask"`) {
		t.Errorf("config_option_update after set_mode: %v", o)
	}
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_w", Name: "write_file", Arguments: `{"path":"new.txt","content":"x\n"}`}}},
		modeltest.Reply{Text: []string{"I may not."}},
	)
	c.prompt(s.SessionID, text("write new.txt"))
	if _, err := os.Stat(filepath.Join(w.ws, "new.txt")); err == nil || asked != 0 {
		t.Errorf("ask mode: the write happened or was asked for (%d requests)", asked)
	}
	ups := c.updates(UpdateToolCallUpdate)
	if last := ups[len(ups)-1]; last["status"] != StatusFailed || last["_meta"].(map[string]any)["kin"].(map[string]any)["status"] != "denied" {
		t.Errorf("the refused write ended %v", last)
	}

	var set SetConfigOptionResponse
	c.call(MethodSessionSetConfig, map[string]any{"sessionId": s.SessionID, "configId": "mode", "value": "auto-edit"}, &set)
	if modeValue(set.ConfigOptions) != "auto-edit" {
		t.Errorf("set_config_option answered %+v", set.ConfigOptions)
	}
	if m := c.updates(UpdateCurrentMode); len(m) != 2 || m[1]["currentModeId"] != "auto-edit" {
		t.Errorf("current_mode_update after set_config_option: %v", m)
	}
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_w2", Name: "write_file", Arguments: `{"path":"new.txt","content":"x\n"}`}}},
		modeltest.Reply{Text: []string{"Written."}},
	)
	c.prompt(s.SessionID, text("write new.txt now"))
	if _, err := os.Stat(filepath.Join(w.ws, "new.txt")); err != nil || asked != 0 {
		t.Errorf("auto-edit: the write did not happen unasked (%v, %d requests)", err, asked)
	}

	// Setting the mode it has announces nothing; what is not a mode, or
	// not a value, is refused.
	c.call(MethodSessionSetMode, SetModeRequest{SessionID: s.SessionID, ModeID: "auto-edit"}, nil)
	if n := len(c.updates(UpdateCurrentMode)); n != 2 {
		t.Errorf("an unchanged mode was announced (%d updates)", n)
	}
	for _, bad := range []struct {
		method string
		params any
	}{
		{MethodSessionSetMode, SetModeRequest{SessionID: s.SessionID, ModeID: ""}},
		{MethodSessionSetMode, SetModeRequest{SessionID: s.SessionID, ModeID: "yolo"}},
		{MethodSessionSetConfig, map[string]any{"sessionId": s.SessionID, "configId": "mode", "type": "boolean", "value": true}},
		{MethodSessionSetConfig, map[string]any{"sessionId": s.SessionID, "configId": "colour", "value": "red"}},
	} {
		if err := c.tryCall(bad.method, bad.params, nil); rpcCode(t, err) != -32602 {
			t.Errorf("%s %v: %v", bad.method, bad.params, err)
		}
	}

	// The next process finds the session in auto-edit, and the load
	// replays the switches in order.
	c.close()
	c2 := w.connect(nil)
	c2.initialize(nil)
	var l LoadSessionResponse
	c2.call(MethodSessionLoad, LoadSessionRequest{SessionID: s.SessionID, Cwd: w.ws, MCPServers: []MCPServer{}}, &l)
	if l.Modes == nil || l.Modes.CurrentModeID != "auto-edit" || modeValue(l.ConfigOptions) != "auto-edit" {
		t.Errorf("session/load: modes %+v, options %+v", l.Modes, l.ConfigOptions)
	}
	var replayed []any
	for _, u := range c2.updates(UpdateCurrentMode) {
		replayed = append(replayed, u["currentModeId"])
	}
	if !slices.Equal(replayed, []any{"ask", "auto-edit"}) {
		t.Errorf("replayed modes %v", replayed)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docsServer is an MCP server with a prompt, for the client to pass.
func docsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	s.AddPrompt(&mcp.Prompt{Name: "intro", Description: "Introduce a topic", Arguments: []*mcp.PromptArgument{{Name: "topic", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Introduce " + req.Params.Arguments["topic"] + " to a newcomer."}}}}, nil
		})
	return s
}

func commandNames(u map[string]any) []string {
	var out []string
	for _, c := range u["availableCommands"].([]any) {
		out = append(out, c.(map[string]any)["name"].(string))
	}
	return out
}

// The session's commands reach the client once it knows the session (after
// session/new's answer) and again when a server's prompts come up; a
// /name prompt runs the command as kin serve does: kin's own answered at
// once, an MCP prompt's text asked as the question.
func TestCommandsAreOfferedAndRun(t *testing.T) {
	w := newWorld(t)
	url := mcptest.ServeHTTP(t, docsServer()) // closed after kin (cleanups run last first)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once") // the docs server's launch
	var s NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{map[string]any{"type": "http", "name": "docs", "url": url, "headers": []any{}}}}, &s)
	c.until("the session's commands", func() bool { return len(c.updates(UpdateCommands)) > 0 })
	answered := c.index(func(f frame) bool { return f.Method == MethodSessionNew && f.Kind == "response" })
	if first := c.index(isUpdate(UpdateCommands)); first < answered {
		t.Errorf("the commands (frame %d) came before session/new's answer (frame %d)", first, answered)
	}
	if names := commandNames(c.updates(UpdateCommands)[0]); !slices.Contains(names, "undo") || !slices.Contains(names, "mode") || slices.Contains(names, "docs:intro") {
		t.Errorf("the first commands: %v", names)
	}

	w.model.Script(modeltest.Reply{Text: []string{"hi"}})
	c.prompt(s.SessionID, text("hello")) // starts the docs server (asked first)
	c.until("the docs server's prompt as a command", func() bool {
		ups := c.updates(UpdateCommands)
		return slices.Contains(commandNames(ups[len(ups)-1]), "docs:intro")
	})
	ups := c.updates(UpdateCommands)
	for _, ac := range ups[len(ups)-1]["availableCommands"].([]any) {
		if m := ac.(map[string]any); m["name"] == "docs:intro" && (m["description"] != "Introduce a topic" || m["input"].(map[string]any)["hint"] != "topic=…") {
			t.Errorf("docs:intro is offered as %v", m)
		}
	}

	w.model.Script(modeltest.Reply{Text: []string{"Caches keep answers."}})
	if res := c.prompt(s.SessionID, text("/docs:intro caching")); res.StopReason != StopEndTurn {
		t.Errorf("/docs:intro: %q", res.StopReason)
	}
	reqs := w.model.Requests()
	if got := reqs[len(reqs)-1].LastUserText(); got != "Introduce caching to a newcomer." {
		t.Errorf("the model was asked %q", got)
	}
	if u := c.updates(UpdateUserMessage); len(u) == 0 || u[len(u)-1]["content"].(map[string]any)["text"] != "Introduce caching to a newcomer." {
		t.Errorf("the inserted question was not shown as the person's: %v", u)
	}

	// kin's own: answered without the model.
	before := len(w.model.Requests())
	res := c.prompt(s.SessionID, text("/plan"))
	msgs := c.updates(UpdateAgentMessage)
	if res.StopReason != StopEndTurn || msgs[len(msgs)-1]["content"].(map[string]any)["text"] != "No plan yet." || len(w.model.Requests()) != before {
		t.Errorf("/plan: %+v, said %v", res, msgs[len(msgs)-1])
	}
	// An unknown command, and a command with more than its text, are
	// refused naming what is wrong; "//" asks a question that starts with
	// a slash.
	if err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": s.SessionID, "prompt": []any{text("/frobnicate")}}, nil); rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "/frobnicate") {
		t.Errorf("/frobnicate: %v", err)
	}
	withFile := []any{text("/plan"), map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///x.md", "text": "x"}}}
	if err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": s.SessionID, "prompt": withFile}, nil); rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "prompt[1]") {
		t.Errorf("/plan with a resource: %v", err)
	}
	w.model.Script(modeltest.Reply{Text: []string{"It is."}})
	c.prompt(s.SessionID, text("//tmp is full?"))
	reqs = w.model.Requests()
	if got := reqs[len(reqs)-1].LastUserText(); got != "/tmp is full?" {
		t.Errorf("the escaped question reached the model as %q", got)
	}
}

// kin's ask tool asks over elicitation/create when the client takes forms;
// a client that does not is never sent one: the question is declined as
// headless, the model told, and the session records it.
func TestKinsQuestionWithoutFormsIsDeclinedAndRecorded(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}) // links, not forms
	sid := c.newSession()
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_ask", Name: "ask", Arguments: `{"questions":[{"question":"Which database?","options":["postgres","sqlite"]}]}`}}},
		modeltest.Reply{Text: []string{"I will pick sqlite."}},
	)
	c.prompt(sid, text("set up the tests"))
	if i := c.index(func(f frame) bool { return f.Method == MethodElicitationCreate }); i >= 0 {
		t.Errorf("a client without forms was sent elicitation/create (frame %d)", i)
	}
	reqs := w.model.Requests()
	if out, _ := reqs[len(reqs)-1].LastToolOutput(); !strings.Contains(out, "no person can answer") {
		t.Errorf("the model was told %q", out)
	}
	c.close()
	svc := agent.New(agent.Options{Home: w.home}) // what is on disk
	defer svc.Shutdown()
	res, err := svc.Resume(sid, agent.ResumeOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range res.History {
		found = found || (it.Type == "elicitation" && it.Source == "kin" && it.Decision == "decline" && it.Reason == "headless")
	}
	if !found {
		t.Errorf("the declined question is not in the session: %+v", res.History)
	}
}
