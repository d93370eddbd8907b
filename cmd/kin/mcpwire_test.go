package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// world is kin with the real MCP wiring, a mock model and MCP servers.
type world struct {
	t     *testing.T
	home  string
	ws    string
	model *modeltest.Server
}

func newWorld(t *testing.T, servers map[string]any) *world {
	w := &world{t: t, home: t.TempDir(), ws: t.TempDir(), model: modeltest.New()}
	t.Cleanup(w.model.Close)
	w.ws, _ = filepath.EvalSymlinks(w.ws)
	w.config(servers)
	return w
}

func (w *world) config(servers map[string]any) {
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(filepath.Join(w.home, "mcp.json"), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) editor() *rpctest.Editor {
	vars := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.model.URL()}
	opts := rpc.Options{
		Home: w.home, Cwd: w.ws, Version: "test", Logger: zap.NewNop(),
		Getenv: func(k string) string { return vars[k] },
		Tools:  func([]string) []tool.Tool { return builtin.Tools(builtin.Options{}) },
		MCP:    mcpFactory(zap.NewNop(), w.home, []string{"read_file", "list_dir", "search", "write_file", "edit_file", "bash"}),
	}
	ed := rpctest.Start(w.t, opts)
	ed.Initialize(w.ws)
	return ed
}

func respond(ed *rpctest.Editor, req map[string]any, decision string) {
	go ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: decision}, nil)
}

func newSession(t *testing.T, ed *rpctest.Editor) string {
	var s rpc.SessionResult
	ed.MustCall("session/new", nil, &s)
	return s.Session.SessionID
}

func startTurn(t *testing.T, ed *rpctest.Editor, sid, input string) string {
	var r rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: input}, &r)
	return r.TurnID
}

// The scenario of spec 000 section 5, through the editor protocol: trust the
// server, approve one call and deny the second (the server sees exactly
// one), then reopen the session with no MCP servers at all.
func TestMCPCallScenarioThroughTheProtocol(t *testing.T) {
	docs := mcptest.NewDocs()
	url := mcptest.ServeHTTP(t, docs.Server)
	t.Setenv("DOCS_TOKEN", "docs-canary-secret")
	w := newWorld(t, map[string]any{"docs": map[string]any{"type": "http", "url": url, "headers": map[string]any{"Authorization": "Bearer ${DOCS_TOKEN}"}}})
	ed := w.editor()
	launch := ed.Wait("approval/request", rpctest.Field("kind", "server_launch"))
	if launch["destination"] != url || launch["server"] != "docs" {
		t.Errorf("launch request %v", launch)
	}
	respond(ed, launch, "trust")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "docs"), rpctest.Field("state", "connected")))

	query := `{"query":"react hooks"}`
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "mcp__docs__query-docs", Arguments: query}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "mcp__docs__query-docs", Arguments: query}}},
		modeltest.Reply{Text: []string{"Hooks let function components keep state."}},
	)
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "approval/request" {
			return
		}
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		switch req["callId"] {
		case "c1":
			respond(ed, req, "allow_once")
		case "c2":
			respond(ed, req, "deny")
		}
	})
	sid := newSession(t, ed)
	tid := startTurn(t, ed, sid, "How do React hooks work?")
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", tid)); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	ap := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
	for k, want := range map[string]string{"server": "docs", "destination": url, "tool": "mcp__docs__query-docs"} {
		if ap[k] != want {
			t.Errorf("approval %s = %v, want %v", k, ap[k], want)
		}
	}
	if !strings.Contains(ap["arguments"].(string), `"query": "react hooks"`) || !strings.Contains(ap["warning"].(string), "Arguments are sent to this MCP server") {
		t.Errorf("approval %v", ap)
	}
	if n := docs.Calls.Load(); n != 1 {
		t.Fatalf("the server saw %d calls, want 1", n)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c2"), rpctest.Field("status", "denied")))

	// Nothing the editor saw carries the header's secret.
	var list map[string]any
	ed.MustCall("mcp/list", nil, &list)
	for _, n := range ed.Raw() {
		if strings.Contains(string(n.Params), "docs-canary-secret") {
			t.Fatalf("secret in %s", n.Method)
		}
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), "docs-canary-secret") || !strings.Contains(string(b), `"trusted":true`) {
		t.Errorf("mcp/list %s", b)
	}
	ed.MustCall("shutdown", nil, nil)

	// Reopen with no MCP servers: the session loads and goes on.
	w.config(map[string]any{})
	ed2 := w.editor()
	var res rpc.SessionResumeResult
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	found := false
	for _, h := range res.History {
		found = found || (h.Name == "mcp__docs__query-docs" && h.Status == "completed")
	}
	if !found {
		t.Errorf("history lost the MCP call: %+v", res.History)
	}
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	t2 := startTurn(t, ed2, sid, "thanks")
	if done := ed2.Wait("turn/completed", rpctest.Field("turnId", t2)); done["status"] != "completed" {
		t.Errorf("%v", done)
	}
}

func TestMCPInterruptedCallIsUnknownAndNeedsAcknowledgement(t *testing.T) {
	docs := mcptest.NewDocs()
	w := newWorld(t, map[string]any{"docs": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, docs.Server)}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "allow_once")
	ed.Wait("mcp/status", rpctest.Field("state", "connected"))
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "s1", Name: "mcp__docs__slow", Arguments: "{}"}}})
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		if n.Method == "approval/request" && req["callId"] == "s1" && req["kind"] == "tool_call" {
			respond(ed, req, "allow_once")
		}
	})
	sid := newSession(t, ed)
	tid := startTurn(t, ed, sid, "do the slow thing")
	<-docs.SlowStarted
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	ed.Wait("turn/completed", rpctest.Field("turnId", tid))
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "s1"), rpctest.Field("status", "unknown")))
	before := len(w.model.Requests())
	t2 := startTurn(t, ed, sid, "next")
	ack := ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "acknowledge_unknown"), rpctest.Field("turnId", t2)))
	respond(ed, ack, "deny")
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", t2)); done["status"] != "cancelled" {
		t.Errorf("%v", done)
	}
	if len(w.model.Requests()) != before {
		t.Error("the question was sent without the acknowledgement")
	}
}

func TestMCPElicitationReachesTheEditor(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "greet", Description: "Greets after asking a name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(
				`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"color":{"type":"string","enum":["red","green"]}},"required":["name"]}`)})
			if err != nil {
				return nil, err
			}
			return mcptest.Text(fmt.Sprintf("%s: hello %v (%v)", res.Action, res.Content["name"], res.Content["color"])), nil
		})
	w := newWorld(t, map[string]any{"asker": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, s)}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "allow_once")
	ed.Wait("mcp/status", rpctest.Field("state", "connected"))
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "g1", Name: "mcp__asker__greet", Arguments: "{}"}}}, modeltest.Reply{Text: []string{"done"}})
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		switch n.Method {
		case "approval/request":
			respond(ed, req, "allow_once")
		case "elicitation/request":
			go ed.Call("elicitation/respond", map[string]any{"requestId": req["requestId"], "action": "accept", "content": map[string]any{"name": "Ana", "color": "green"}}, nil)
		}
	})
	sid := newSession(t, ed)
	tid := startTurn(t, ed, sid, "greet me")
	ed.Wait("turn/completed", rpctest.Field("turnId", tid))
	el := ed.Wait("elicitation/request", nil)
	if el["server"] != "asker" || el["mode"] != "form" || len(el["fields"].([]any)) != 2 {
		t.Errorf("elicitation %v", el)
	}
	ed.Wait("elicitation/resolved", rpctest.Field("action", "accept"))
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "g1"), rpctest.Field("status", "completed")))
	if !strings.Contains(call["output"].(string), "accept: hello Ana (green)") {
		t.Errorf("output %v", call["output"])
	}
	// The question and its outcome are on record; the answer is not.
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	found := false
	for _, h := range res.History {
		found = found || (h.Type == "elicitation" && h.Server == "asker" && h.Decision == "accept")
	}
	if !found {
		t.Errorf("no elicitation in history: %+v", res.History)
	}
	b, _ := os.ReadFile(filepath.Join(w.home, "sessions", sid+".jsonl"))
	if strings.Contains(string(b), `"Ana"`) {
		t.Error("the person's answer was written to the session log")
	}
}

func TestMCPManagerMethodsAndTrustGrants(t *testing.T) {
	docs := mcptest.NewDocs()
	url := mcptest.ServeHTTP(t, docs.Server)
	w := newWorld(t, map[string]any{})
	ed := w.editor()
	ed.MustCall("mcp/add", map[string]any{"scope": "global", "name": "docs", "config": map[string]any{"type": "http", "url": url}}, nil)
	var list struct {
		Servers []map[string]any `json:"servers"`
	}
	ed.MustCall("mcp/list", nil, &list)
	if len(list.Servers) != 1 || list.Servers[0]["name"] != "docs" {
		t.Fatalf("after add: %v", list.Servers)
	}
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		if n.Method == "approval/request" && req["kind"] == "server_launch" {
			respond(ed, req, "trust")
		}
	})
	var applied struct {
		Servers []map[string]any `json:"servers"`
	}
	ed.MustCall("mcp/apply", nil, &applied)
	if applied.Servers[0]["state"] != "connected" {
		t.Fatalf("apply: %v", applied.Servers)
	}
	var check struct {
		Results []map[string]any `json:"results"`
	}
	ed.MustCall("mcp/check", map[string]any{"name": "docs"}, &check)
	if check.Results[0]["ready"] != true {
		t.Errorf("check %v", check.Results)
	}
	var grants struct {
		Grants []map[string]any `json:"grants"`
	}
	ed.MustCall("grants/list", nil, &grants)
	if len(grants.Grants) != 1 || grants.Grants[0]["id"] != "trust:docs" {
		t.Fatalf("grants %v", grants.Grants)
	}
	ed.MustCall("grants/revoke", map[string]any{"id": "trust:docs"}, nil)
	ed.MustCall("grants/list", nil, &grants)
	if len(grants.Grants) != 0 {
		t.Errorf("after revoke %v", grants.Grants)
	}
	ed.MustCall("mcp/setEnabled", map[string]any{"name": "docs", "enabled": false}, nil)
	ed.MustCall("mcp/apply", nil, &applied)
	if applied.Servers[0]["enabled"] != false {
		t.Errorf("disable: %v", applied.Servers)
	}
	ed.MustCall("mcp/remove", map[string]any{"name": "docs"}, nil)
	ed.MustCall("mcp/list", nil, &list)
	if len(list.Servers) != 0 {
		t.Errorf("after remove: %v", list.Servers)
	}
	if code, _ := ed.CallErr("mcp/add", map[string]any{"name": "bad", "config": map[string]any{"command": "x", "url": "https://h"}}); code != rpc.CodeConfigError && code != 0 {
		t.Logf("bad entry add code %d", code)
	}
}
