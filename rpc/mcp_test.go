package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// world is kin with the real MCP wiring, a mock model and MCP servers.
type world struct {
	t     *testing.T
	home  string
	ws    string
	model *modeltest.Server
	// sandbox confines the built-in tools' commands (nil: sandbox.Default()).
	sandbox *sandbox.Sandbox
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
	return w.editorWith(nil, nil)
}

// editorWith starts an editor whose kin logs to log and traces to trace
// (nil: neither).
func (w *world) editorWith(log *zap.Logger, trace io.Writer) *rpctest.Editor {
	if log == nil {
		log = zap.NewNop()
	}
	ed := rpctest.Start(w.t, w.options(log, trace))
	ed.Initialize(w.ws)
	return ed
}

// options are the server options of this world's kin.
func (w *world) options(log *zap.Logger, trace io.Writer) rpc.Options {
	vars := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.model.URL()}
	return rpc.Options{
		Home: w.home, Cwd: w.ws, Version: "test", Logger: log, Trace: trace,
		Getenv: func(k string) string { return vars[k] },
		Tools:  func([]string) []tool.Tool { return builtin.Tools(builtin.Options{}) },
		MCP:    &rpc.MCPOptions{},
	}
}

// serve starts kin for an editor that has not sent initialize yet.
func (w *world) serve() *rpctest.Editor {
	vars := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.model.URL()}
	return rpctest.Start(w.t, rpc.Options{
		Home: w.home, Cwd: w.ws, Version: "0.1.0", Logger: zap.NewNop(),
		Getenv:  func(k string) string { return vars[k] },
		Tools:   func([]string) []tool.Tool { return builtin.Tools(builtin.Options{Sandbox: w.sandbox}) },
		Sandbox: w.sandbox,
		MCP:     &rpc.MCPOptions{},
	})
}

func respond(ed *rpctest.Editor, req map[string]any, decision string) {
	go ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: decision}, nil)
}

// allowEveryApproval answers every approval the editor is asked from now
// on with allow_once: for tests whose subject is not the approval.
func allowEveryApproval(ed *rpctest.Editor) {
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		if n.Method == "approval/request" {
			respond(ed, req, "allow_once")
		}
	})
}

// allowLaunch answers the server launch approval the editor is asked with
// allow_once, then waits until server is connected: for tests whose
// subject is what the server does once it runs.
func allowLaunch(ed *rpctest.Editor, server string) {
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "allow_once")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", server), rpctest.Field("state", "connected")))
}

// newSession makes a session with no params on ed and returns its id.
func newSession(t testing.TB, ed *rpctest.Editor) string {
	var s rpc.SessionResult
	ed.MustCall("session/new", nil, &s)
	return s.Session.SessionID
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
	tid := start(t, ed, sid, "How do React hooks work?")
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
	t2 := start(t, ed2, sid, "thanks")
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
	tid := start(t, ed, sid, "do the slow thing")
	<-docs.SlowStarted
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	ed.Wait("turn/completed", rpctest.Field("turnId", tid))
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "s1"), rpctest.Field("status", "unknown")))
	before := len(w.model.Requests())
	t2 := start(t, ed, sid, "next")
	ack := ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "acknowledge_unknown"), rpctest.Field("turnId", t2)))
	// It reads as what it is: an acknowledgement naming the call and what
	// kin knows of it, not an approval.
	if title, warning := ack["title"].(string), ack["warning"].(string); !strings.HasPrefix(title, "Acknowledge") ||
		!strings.Contains(warning, "mcp__docs__slow") || !strings.Contains(warning, "what kin knows:") || !strings.Contains(warning, "will not be run again") {
		t.Errorf("the acknowledgement reads %q / %q", title, warning)
	}
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
	tid := start(t, ed, sid, "greet me")
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

// bufferLogger logs everything, fields included, as JSON lines to buf.
func bufferLogger(buf io.Writer) *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(buf), zapcore.DebugLevel))
}

// signInEditor answers like a person at an editor: it allows every tool
// call once, and for a sign-in link (mode url, purpose oauth) answers accept
// and lets the test browser open it, which follows the authorization
// server's redirect to kin's loopback callback. Any other elicitation fails
// the test. (A server launch may be asked before the hook is in place: the
// test answers it.)
func signInEditor(t *testing.T, ed *rpctest.Editor, b *oauthtest.Browser) {
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		switch n.Method {
		case "approval/request":
			if req["kind"] != "server_launch" {
				respond(ed, req, "allow_once")
			}
		case "elicitation/request":
			if req["mode"] != "url" || req["purpose"] != "oauth" {
				t.Errorf("unexpected elicitation %v", req)
				go ed.Call("elicitation/respond", map[string]any{"requestId": req["requestId"], "action": "decline"}, nil)
				return
			}
			go func() {
				_ = ed.Call("elicitation/respond", map[string]any{"requestId": req["requestId"], "action": "accept"}, nil)
				ctx, cancel := context.WithTimeout(context.Background(), rpctest.Timeout)
				defer cancel()
				if err := b.Visit(ctx, req["url"].(string)); err != nil {
					t.Errorf("browser: %v", err)
				}
			}()
		}
	})
}

type listedRow struct {
	Name  string `json:"name"`
	State string `json:"state"`
	Auth  string `json:"auth"`
	OAuth *struct {
		ClientID    string `json:"clientId"`
		RedirectURI string `json:"redirectUri"`
		SignedIn    bool   `json:"signedIn"`
	} `json:"oauth"`
}

// listRow returns mcp/list's result, raw and decoded.
func listRow(t *testing.T, ed *rpctest.Editor, name string) (string, listedRow) {
	t.Helper()
	var raw json.RawMessage
	ed.MustCall("mcp/list", nil, &raw)
	var list struct {
		Servers []listedRow `json:"servers"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Servers {
		if r.Name == name {
			return string(raw), r
		}
	}
	t.Fatalf("no row %s in %s", name, raw)
	return "", listedRow{}
}

// OAuth end to end through the editor protocol: an "auth": "oauth" server
// is trusted, its sign-in URL reaches the editor as an elicitation/request
// of mode url and purpose oauth, the browser completes the sign-in and the
// server connects; the model calls its tool in a turn. A new editor on the
// same KIN_HOME reconnects without asking anything; mcp/login signs in
// again. No credential the authorization server issued appears in any
// notification, mcp/list result, session log, trace or log line.
func TestMCPOAuthSignInThroughTheProtocol(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	w := newWorld(t, map[string]any{"api": map[string]any{
		"type": "http", "url": rs.URL, "auth": "oauth", "headers": map[string]any{"X-Tenant": "acme"},
	}})
	browser := &oauthtest.Browser{}
	var trace, logs lockedBuffer

	ed := w.editorWith(bufferLogger(&logs), &trace)
	signInEditor(t, ed, browser)
	launch := ed.Wait("approval/request", rpctest.Field("kind", "server_launch"))
	if launch["server"] != "api" {
		t.Errorf("launch %v", launch)
	}
	respond(ed, launch, "trust")
	el := ed.Wait("elicitation/request", rpctest.Field("purpose", "oauth"))
	if el["server"] != "api" || el["mode"] != "url" || el["sessionId"] != nil ||
		!strings.HasPrefix(el["url"].(string), as.URL+"/authorize?") || !strings.Contains(el["message"].(string), "Sign in to api") {
		t.Errorf("sign-in elicitation %v", el)
	}
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "api"), rpctest.Field("state", "connected")))
	ed.Wait("elicitation/resolved", rpctest.Field("requestId", el["requestId"]))
	if n := len(browser.Visited()); n != 1 {
		t.Errorf("the browser opened %d sign-in links", n)
	}

	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "mcp__api__whoami", Arguments: "{}"}}},
		modeltest.Reply{Text: []string{"You are acme."}},
	)
	sid := newSession(t, ed)
	tid := start(t, ed, sid, "who am I?")
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", tid)); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "w1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(call["output"]), "tenant=acme") {
		t.Errorf("tool output %v", call["output"])
	}
	list1, row := listRow(t, ed, "api")
	if row.State != "connected" || row.Auth != "oauth" || row.OAuth == nil || !row.OAuth.SignedIn ||
		!strings.HasPrefix(row.OAuth.RedirectURI, "http://127.0.0.1:") || !strings.HasSuffix(row.OAuth.RedirectURI, "/callback") {
		t.Errorf("mcp/list row %s", list1)
	}
	notes := ed.Raw()
	ed.MustCall("shutdown", nil, nil)

	// A new editor on the same KIN_HOME: connected from the stored sign-in,
	// without an approval or an elicitation.
	ed2 := w.editorWith(bufferLogger(&logs), &trace)
	signInEditor(t, ed2, browser)
	ed2.Wait("mcp/status", rpctest.All(rpctest.Field("server", "api"), rpctest.Field("state", "connected")))
	if n := len(ed2.Notes("elicitation/request")) + len(ed2.Notes("approval/request")); n != 0 {
		t.Errorf("the restart asked %d questions", n)
	}
	var check struct {
		Results []map[string]any `json:"results"`
	}
	ed2.MustCall("mcp/check", map[string]any{"name": "api"}, &check)
	if check.Results[0]["ready"] != true {
		t.Errorf("check %v", check.Results)
	}

	// mcp/login runs a new sign-in and answers with the state.
	var login map[string]any
	ed2.MustCall("mcp/login", map[string]any{"name": "api"}, &login)
	if login["state"] != "connected" {
		t.Errorf("mcp/login %v", login)
	}
	if n := len(ed2.Notes("elicitation/request")); n != 1 {
		t.Errorf("mcp/login asked %d times", n)
	}
	if c := as.Counts(); c.Authorizes != 2 || c.Registrations != 1 {
		t.Errorf("authorization server counts %+v: want 2 sign-ins with one registration", c)
	}
	list2, row := listRow(t, ed2, "api")
	if !row.OAuth.SignedIn || row.State != "connected" {
		t.Errorf("after mcp/login: %s", list2)
	}
	if code, _ := ed2.CallErr("mcp/login", map[string]any{"name": "nope"}); code != rpc.CodeNotFound {
		t.Errorf("unknown server: code %d", code)
	}
	notes = append(notes, ed2.Raw()...)
	ed2.MustCall("shutdown", nil, nil)

	// The canary: every access and refresh token, code and client secret
	// the authorization server handed out.
	secrets := as.Secrets()
	if len(secrets) < 4 {
		t.Fatalf("the authorization server issued only %d credentials", len(secrets))
	}
	session, err := os.ReadFile(filepath.Join(w.home, "sessions", sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, n := range notes {
		all.WriteString(n.Method + " " + string(n.Params) + "\n")
	}
	places := map[string]string{
		"notifications": all.String(), "mcp/list": list1 + list2, "session log": string(session),
		"trace": trace.String(), "log": logs.String(),
	}
	if !strings.Contains(trace.String(), "elicitation/request") || !strings.Contains(logs.String(), "mcp oauth: signed in") {
		t.Fatalf("the trace or the log missed the sign-in")
	}
	for _, secret := range secrets {
		for where, text := range places {
			if strings.Contains(text, secret) {
				t.Errorf("credential %.8s… appears in the %s", secret, where)
			}
		}
	}
}

// A declined sign-in: the server waits in needs_login, mcp/check says to
// run mcp/login, and a declined mcp/login answers with an error saying why.
func TestMCPOAuthDeclinedThroughTheProtocol(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	w := newWorld(t, map[string]any{
		"api":   map[string]any{"type": "http", "url": rs.URL, "auth": "oauth"},
		"plain": map[string]any{"type": "http", "url": rs.URL},
	})
	ed := w.editor()
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		if n.Method == "elicitation/request" {
			go ed.Call("elicitation/respond", map[string]any{"requestId": req["requestId"], "action": "decline"}, nil)
		}
	})
	for _, name := range []string{"api", "plain"} {
		respond(ed, ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", name))), "trust")
	}
	st := ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "api"), rpctest.Field("state", "needs_login")))
	if !strings.Contains(fmt.Sprint(st["error"]), "run mcp/login") {
		t.Errorf("status %v", st)
	}
	var check struct {
		Results []map[string]any `json:"results"`
	}
	ed.MustCall("mcp/check", map[string]any{"name": "api"}, &check)
	if ex := fmt.Sprint(check.Results[0]["explanation"]); check.Results[0]["ready"] != false ||
		!strings.HasPrefix(ex, "api uses OAuth and has no stored sign-in: run mcp/login") {
		t.Errorf("check %v", check.Results)
	}
	_, row := listRow(t, ed, "api")
	if row.OAuth == nil || row.OAuth.SignedIn {
		t.Errorf("row %+v", row)
	}
	code, msg := ed.CallErr("mcp/login", map[string]any{"name": "api"})
	if code != rpc.CodeInternalError || !strings.Contains(msg, "not started") {
		t.Errorf("declined mcp/login: %d %q", code, msg)
	}
	if n := as.Counts().Exchanges; n != 0 {
		t.Errorf("%d code exchanges after declines", n)
	}
	// A server without "auth": "oauth": its 401 says OAuth is offered, and
	// mcp/login is a configuration error.
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "plain"), rpctest.Field("state", "needs_login")))
	if code, msg := ed.CallErr("mcp/login", map[string]any{"name": "plain"}); code != rpc.CodeConfigError || !strings.Contains(msg, `"auth": "oauth"`) {
		t.Errorf("mcp/login of a static server: %d %q", code, msg)
	}
}

// mcp/list right after initialized lists the configured servers: the
// configuration is read while initialize is answered, not by the start-up
// that initialized kicks off in the background (it answered no servers in 7
// of 10 runs). Many fresh connections, as the race was one of timing.
func TestMCPListRightAfterInitializedSeesTheConfiguration(t *testing.T) {
	w := newWorld(t, map[string]any{
		"later":    map[string]any{"command": "kin-test-no-such-server"},
		"disabled": map[string]any{"command": "kin-test-no-such-server", "disabled": true},
	})
	for i := range 25 {
		ed := w.editor()
		var list struct {
			Servers []struct {
				Name      string `json:"name"`
				LastError string `json:"lastError"`
			} `json:"servers"`
		}
		ed.MustCall("mcp/list", nil, &list)
		names := map[string]string{}
		for _, s := range list.Servers {
			names[s.Name] = s.LastError
		}
		if _, ok := names["later"]; !ok || len(names) != 2 {
			t.Fatalf("connection %d: mcp/list right after initialized: %v", i, list.Servers)
		}
		if e := names["later"]; strings.Contains(e, "apply") {
			t.Errorf("connection %d: a server about to start says %q", i, e)
		}
		ed.Conn.Close()
		<-ed.Done
	}
}
