package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// profileForm is an MCP server's form with every field kind of the
// current elicitation schema.
const profileForm = `{"type":"object","required":["name"],"properties":{
  "name":{"type":"string","title":"Name","minLength":1,"maxLength":60},
  "email":{"type":"string","title":"Email","format":"email"},
  "age":{"type":"integer","title":"Age","minimum":0,"maximum":150},
  "subscribe":{"type":"boolean","title":"Subscribe","description":"Send me the newsletter","default":false},
  "color":{"type":"string","title":"Favourite colour","enum":["red","green"],"enumNames":["Red","Green"]},
  "hero":{"type":"string","title":"Hero","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Wonder Woman"}],"default":"hero-1"},
  "fish":{"type":"array","title":"Fish","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"},{"const":"fish-3","title":"Trout"}]},"default":["fish-1"]},
  "tags":{"type":"array","title":"Tags","items":{"type":"string","enum":["work","home"]}},
  "member":{"type":"string","title":"Member number","description":"As on your card","pattern":"^[A-Z]{3}-[0-9]{4}$"}}}`

func profileServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "profile", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "update-profile", Description: "Updates your profile after asking for it.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Please provide your details", RequestedSchema: json.RawMessage(profileForm)})
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(res.Content)
			return mcptest.Text(res.Action + ": " + string(b)), nil
		})
	s.AddTool(&mcp.Tool{Name: "whoami", Description: "Says whose profile this is.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcptest.Text("ana"), nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "review", Title: "Review", Description: "Review a file for bugs",
		Arguments: []*mcp.PromptArgument{{Name: "file", Description: "the file to review", Required: true}, {Name: "focus", Description: "what to look at"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Review " + req.Params.Arguments["file"] + " for bugs."}}}}, nil
		})
	return s
}

func params(kv ...any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// TestGoldenFrames drives the real server through the fake editor over a
// whole working day (MCP servers trusted and signed in, turns with every
// kind of approval, an elicitation, a cancelled and a failed turn, the
// server manager, grants) and keeps, per method and notification, the
// frames that crossed the wire in testdata/golden/<method>.json. The editor
// shims decode every one of them in their own tests, so these frames are
// what a renamed field breaks. Run with -update after a deliberate change,
// review the diff, and update PROTOCOL.md.
func TestGoldenFrames(t *testing.T) {
	docs := mcptest.NewDocs()
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	api := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	browser := &oauthtest.Browser{}
	w := newWorld(t, map[string]any{
		"docs":    map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, docs.Server), "headers": map[string]any{"Authorization": "Bearer ${DOCS_TOKEN}"}},
		"profile": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, profileServer())},
		"api":     map[string]any{"type": "http", "url": api.URL, "auth": "oauth"},
		"bad":     map[string]any{"command": "x", "url": "https://example.com/mcp"},
	})
	t.Setenv("DOCS_TOKEN", "docs-canary-secret")
	// Commands are confined, as on a machine with a sandbox; a second kin
	// below has none.
	w.sandbox = sandbox.New(sandbox.FromSettings(w.home))
	// The worlds without a sandbox of their own use the process's default
	// one: tried here, so whether another test tried it first does not
	// change initialize's frames (probing).
	sandbox.Default().Status()
	if st := w.sandbox.Status(); !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("KIN_REQUIRE_BWRAP=1 but commands cannot be confined: %s", st.Reason)
		}
		t.Skipf("the golden frames show confined commands; no sandbox here: %s", st.Reason)
	}
	if err := os.WriteFile(filepath.Join(w.ws, ".mcp.json"), []byte(`{"mcpServers":{"legacy":{"command":"node","args":["server.js"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	z := &normalizer{fixed: []string{w.ws, "/home/ana/src/app", w.home, "/home/ana/.kin"}, seen: map[string]string{}, n: map[string]int{}}

	// An editor that skipped initialize.
	early := newRecorder(t, w.serve())
	early.fail("session/list", nil, rpc.CodeNotInitialized)
	ed := w.serve()
	g := early.forEditor(ed)

	// Lifecycle and the MCP servers' start.
	g.call("initialize", rpc.InitializeParams{ProcessID: ptr(4242), ClientInfo: &rpc.ClientInfo{Name: "kin.nvim", Version: "0.1.0"},
		Capabilities:     &rpc.ClientCapabilities{Approvals: true, Elicitation: &rpc.ElicitationCaps{Form: true, URL: true}},
		WorkspaceFolders: []rpc.WorkspaceFolder{{URI: "file://" + w.ws, Name: "app"}}}, nil)
	g.notify("initialized", struct{}{})
	launches := map[string]map[string]any{}
	for _, name := range []string{"docs", "profile", "api"} {
		launches[name] = ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", name)))
	}
	g.note("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", "docs")))
	g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: launches["docs"]["requestId"].(string), Decision: "trust"}, nil)
	g.note("approval/resolved", rpctest.Field("requestId", launches["docs"]["requestId"]))
	respond(ed, launches["profile"], "allow_once")
	respond(ed, launches["api"], "trust")
	g.note("mcp/status", rpctest.All(rpctest.Field("server", "docs"), rpctest.Field("state", "connected")))
	g.note("notice", rpctest.Field("message", fmt.Sprintf("MCP server docs: 9 tools from %s", launches["docs"]["destination"])))
	signIn := g.note("elicitation/request", rpctest.Field("purpose", "oauth"))
	g.call("elicitation/respond", rpc.ElicitationRespondParams{RequestID: signIn["requestId"].(string), Action: "decline"}, nil)
	g.note("elicitation/resolved", rpctest.Field("requestId", signIn["requestId"]))
	g.note("mcp/status", rpctest.All(rpctest.Field("server", "api"), rpctest.Field("state", "needs_login")))
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "profile"), rpctest.Field("state", "connected")))
	g.note("commands/changed", nil) // profile's prompt

	// A turn with every kind of approval and an MCP server's form.
	var s1 rpc.SessionResult
	g.call("session/new", rpc.SessionNewParams{Title: "fix the flaky test"}, &s1)
	sid := s1.Session.SessionID
	w.model.Script(
		modeltest.Reply{Text: []string{"Let me look."}, Calls: []modeltest.Call{{ID: "call_1", Name: "bash", Arguments: `{"command":"echo ok"}`}}, Usage: modeltest.Usage{Input: 812, Output: 40}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_2", Name: "write_file", Arguments: `{"path":"main.go","content":"package main\n\nfunc main() {}\n"}`}}, Usage: modeltest.Usage{Input: 900, Output: 30}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_3", Name: "mcp__docs__query-docs", Arguments: `{"query":"react hooks"}`}}, Usage: modeltest.Usage{Input: 950, Output: 20}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_4", Name: "mcp__profile__update-profile", Arguments: `{}`}}, Usage: modeltest.Usage{Input: 990, Output: 20}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_6", Name: "bash", Arguments: `{"command":"curl -sI https://example.com","network":true}`}}, Usage: modeltest.Usage{Input: 995, Output: 20}},
		modeltest.Reply{Text: []string{"All tests ", "pass."}, Usage: modeltest.Usage{Input: 1000, Output: 10}},
	)
	var ts rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "run the tests"}, &ts)
	g.note("turn/started", rpctest.Field("turnId", ts.TurnID))
	g.note("turn/delta", rpctest.Field("turnId", ts.TurnID))
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_1"), rpctest.Field("status", "pending")))
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_1"), rpctest.Field("status", "awaiting_approval")))
	for _, c := range []struct{ call, decision string }{
		{"call_1", "allow_always_permanent"}, {"call_2", "allow_once"}, {"call_3", "allow_always"}, {"call_4", "allow_once"},
	} {
		req := g.note("approval/request", rpctest.Field("callId", c.call))
		g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: c.decision}, nil)
		if c.call == "call_1" {
			g.note("approval/resolved", rpctest.Field("requestId", req["requestId"]))
			g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_1"), rpctest.Field("status", "running")))
			g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_1"), rpctest.Field("status", "completed")))
		}
	}
	form := g.note("elicitation/request", rpctest.Field("mode", "form"))
	g.fail("elicitation/respond", rpc.ElicitationRespondParams{RequestID: form["requestId"].(string), Action: "accept",
		Content: params("name", "Ana", "age", -1, "fish", []string{"fish-1", "fish-2", "fish-3"}, "member", "ab-1")}, rpc.CodeInvalidParams)
	g.call("elicitation/respond", rpc.ElicitationRespondParams{RequestID: form["requestId"].(string), Action: "accept",
		Content: params("name", "Ana", "email", "ana@example.com", "age", 31, "subscribe", true, "color", "red", "hero", "hero-2", "fish", []string{"fish-2"}, "tags", []string{"work"})}, nil)
	g.note("elicitation/resolved", rpctest.Field("requestId", form["requestId"]))
	net := g.note("approval/request", rpctest.Field("callId", "call_6"))
	g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: net["requestId"].(string), Decision: "deny"}, nil)
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_6"), rpctest.Field("status", "denied")))
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_2"), rpctest.Field("status", "completed")))
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_3"), rpctest.Field("status", "completed"))) // modelSaw of an MCP result
	g.note("turn/completed", rpctest.Field("turnId", ts.TurnID))
	g.call("session/list", nil, nil)
	g.call("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)
	// A page: the newest 2 items, and the cursor of the older ones.
	var page rpc.SessionResumeResult
	g.call("session/resume", rpc.SessionResumeParams{SessionID: sid, Limit: 2}, &page)
	if page.Cursor == "" || len(page.History) != 2 {
		t.Fatalf("page %+v", page)
	}
	g.call("session/resume", rpc.SessionResumeParams{SessionID: sid, Limit: 2, Before: page.Cursor}, nil)
	g.fail("session/resume", rpc.SessionIDParams{SessionID: "s_20261130T231500_000000"}, rpc.CodeSessionNotFound)

	// A command that is still running when the turn is cancelled: kin
	// kills it and says so (failed: it started, was killed, printed what it
	// did), so the next question goes without an acknowledgement.
	hold := make(chan struct{})
	defer close(hold)
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_5", Name: "bash", Arguments: `{"command":"echo started; sleep 30"}`}}, Usage: modeltest.Usage{Input: 1200, Output: 10}},
		modeltest.Reply{Text: []string{"Stopped."}, Usage: modeltest.Usage{Input: 1300, Output: 3}})
	var t2 rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "wait a bit"}, &t2)
	sleep := ed.Wait("approval/request", rpctest.Field("callId", "call_5"))
	g.fail("approval/respond", rpc.ApprovalRespondParams{RequestID: sleep["requestId"].(string), Decision: "trust"}, rpc.CodeInvalidParams)
	g.call("session/resume", rpc.SessionIDParams{SessionID: sid}, nil) // with the approval pending
	g.fail("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "and this"}, rpc.CodeBusy)
	g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: sleep["requestId"].(string), Decision: "allow_once"}, nil)
	g.fail("approval/respond", rpc.ApprovalRespondParams{RequestID: sleep["requestId"].(string), Decision: "allow_once"}, rpc.CodeNotFound)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_5"), rpctest.Field("outputDelta", "started\n")))
	g.call("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_5"), rpctest.Field("status", "failed")))
	g.note("turn/completed", rpctest.Field("turnId", t2.TurnID))
	var t3 rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "is it done?"}, &t3)
	ed.Wait("turn/completed", rpctest.Field("turnId", t3.TurnID))
	for _, r := range ed.Notes("approval/request") {
		if r["turnId"] == t3.TurnID {
			t.Errorf("a command kin killed was asked about: %v", r)
		}
	}

	// An MCP call still running when the turn is cancelled: whether the
	// server acted is unknown, and the next question first asks to
	// acknowledge it, saying what kin knows.
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_9", Name: "mcp__docs__slow", Arguments: `{}`}}, Usage: modeltest.Usage{Input: 1400, Output: 10}},
		modeltest.Reply{Text: []string{"It may have run."}, Usage: modeltest.Usage{Input: 1500, Output: 5}})
	var tSlow rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "run the slow query"}, &tSlow)
	slow := ed.Wait("approval/request", rpctest.Field("callId", "call_9"))
	g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: slow["requestId"].(string), Decision: "allow_once"}, nil)
	<-docs.SlowStarted
	g.call("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	g.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_9"), rpctest.Field("status", "unknown")))
	g.note("turn/completed", rpctest.Field("turnId", tSlow.TurnID))
	var t5 rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "did it run?"}, &t5)
	ack := g.note("approval/request", rpctest.Field("kind", "acknowledge_unknown"))
	if w := ack["warning"].(string); !strings.Contains(w, "mcp__docs__slow") || !strings.Contains(w, "what kin knows:") {
		t.Errorf("the acknowledgement does not say what kin knows: %q", w)
	}
	g.call("approval/respond", rpc.ApprovalRespondParams{RequestID: ack["requestId"].(string), Decision: "allow_once"}, nil)
	ed.Wait("turn/completed", rpctest.Field("turnId", t5.TurnID))

	// A turn the model service refuses; its warning is also a log line.
	w.model.Script(modeltest.Reply{HTTPStatus: 401})
	var t4 rpc.TurnStartResult
	g.call("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "one more"}, &t4)
	g.note("turn/completed", rpctest.Field("turnId", t4.TurnID))
	g.note("log/message", func(m map[string]any) bool { return strings.HasPrefix(fmt.Sprint(m["message"]), "turn failed") })
	g.fail("turn/start", rpc.TurnStartParams{SessionID: "s_20261130T231500_000000", Input: "x"}, rpc.CodeSessionNotFound)
	g.call("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil) // nothing running

	// The server manager.
	g.call("mcp/list", nil, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.call("mcp/login", rpc.MCPNameParams{Name: "api"}, nil)
	}()
	signIn = ed.Wait("elicitation/request", rpctest.All(rpctest.Field("purpose", "oauth"), func(m map[string]any) bool { return m["requestId"] != signIn["requestId"] }))
	g.call("elicitation/respond", rpc.ElicitationRespondParams{RequestID: signIn["requestId"].(string), Action: "accept"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.Timeout)
	defer cancel()
	if err := browser.Visit(ctx, signIn["url"].(string)); err != nil {
		t.Fatal(err)
	}
	<-done
	g.fail("mcp/login", rpc.MCPNameParams{Name: "nope"}, rpc.CodeNotFound)
	g.call("mcp/check", rpc.MCPNameParams{Name: "docs"}, nil)
	g.call("mcp/add", rpc.MCPAddParams{Scope: "project", Name: "files", Config: json.RawMessage(`{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/data"]}`)}, nil)
	g.fail("mcp/add", rpc.MCPAddParams{Scope: "project", Name: "files", Config: json.RawMessage(`{"command":"npx"}`)}, rpc.CodeConfigError)
	g.call("mcp/update", rpc.MCPAddParams{Name: "files", Config: json.RawMessage(`{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/srv/data"]}`)}, nil)
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		g.fail("mcp/apply", nil, rpc.CodeRequestCancelled)
	}()
	files := ed.Wait("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", "files")))
	g.notify("$/cancelRequest", map[string]any{"id": g.lastID()})
	<-applied
	ed.Wait("approval/resolved", rpctest.Field("requestId", files["requestId"]))
	g.call("mcp/setEnabled", rpc.MCPSetEnabledParams{Name: "files", Enabled: ptr(false)}, nil)
	g.call("mcp/apply", nil, nil)
	g.call("mcp/reload", nil, nil)
	g.call("mcp/remove", rpc.MCPRemoveParams{Name: "files"}, nil)
	g.fail("mcp/remove", rpc.MCPRemoveParams{Name: "files"}, rpc.CodeNotFound)
	// profile was allowed once: started again, it is asked about again, and
	// now kin knows which of its tools trusting it would let run unasked.
	g.call("mcp/setEnabled", rpc.MCPSetEnabledParams{Name: "profile", Enabled: ptr(false)}, nil)
	g.call("mcp/apply", nil, nil)
	g.call("mcp/setEnabled", rpc.MCPSetEnabledParams{Name: "profile", Enabled: ptr(true)}, nil)
	reapplied := make(chan struct{})
	go func() {
		defer close(reapplied)
		g.call("mcp/apply", nil, nil)
	}()
	again := g.note("approval/request", rpctest.All(rpctest.Field("kind", "server_launch"), rpctest.Field("server", "profile"),
		func(m map[string]any) bool { return m["requestId"] != launches["profile"]["requestId"] }))
	if fmt.Sprint(again["readOnlyTools"]) != "[whoami]" {
		t.Fatalf("the second launch approval of profile lists %v", again["readOnlyTools"])
	}
	respond(ed, again, "allow_once")
	<-reapplied
	g.call("mcp/adopt", rpc.MCPAdoptParams{Name: "legacy"}, nil)

	// Grants.
	var grants rpc.GrantsListResult
	g.call("grants/list", nil, &grants)
	for _, gr := range grants.Grants {
		if gr.Scope == "permanent" && gr.Type == "bash" {
			g.call("grants/revoke", rpc.GrantIDParams{ID: gr.ID}, nil)
		}
	}
	g.fail("grants/revoke", rpc.GrantIDParams{ID: "g_99"}, rpc.CodeNotFound)

	goldenPeer(t, g, w)

	// A kin whose sandbox is off says so at start and on every command.
	off := newWorld(t, map[string]any{})
	if err := os.WriteFile(filepath.Join(off.home, "settings.json"), []byte(`{"sandbox":"off"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	off.sandbox = sandbox.New(sandbox.FromSettings(off.home))
	z.fixed = append(z.fixed, off.ws, "/home/ana/src/app", off.home, "/home/ana/.kin")
	edOff := off.serve()
	o := g.forKin(edOff, "off")
	o.call("initialize", rpc.InitializeParams{ClientInfo: &rpc.ClientInfo{Name: "kin.nvim", Version: "0.1.0"},
		WorkspaceFolders: []rpc.WorkspaceFolder{{URI: "file://" + off.ws, Name: "app"}}}, nil)
	edOff.Notify("initialized", struct{}{})
	o.note("notice", rpctest.Field("source", "sandbox"))
	off.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_7", Name: "bash", Arguments: `{"command":"make"}`}}}, modeltest.Reply{Text: []string{"Not run."}})
	var so rpc.SessionResult
	edOff.MustCall("session/new", nil, &so)
	var to rpc.TurnStartResult
	edOff.MustCall("turn/start", rpc.TurnStartParams{SessionID: so.Session.SessionID, Input: "build it"}, &to)
	unconfined := o.note("approval/request", rpctest.Field("callId", "call_7"))
	edOff.MustCall("approval/respond", rpc.ApprovalRespondParams{RequestID: unconfined["requestId"].(string), Decision: "deny"}, nil)
	edOff.Wait("turn/completed", rpctest.Field("turnId", to.TurnID))

	// A session no person at an editor made (a one-shot kin chat's): it is
	// marked, and an editor's list of the person's sessions leaves it out.
	var s2 rpc.SessionResult
	g.call("session/new", rpc.SessionNewParams{Origin: "chat-oneshot"}, &s2)
	g.call("session/list", rpc.SessionListParams{Interactive: true}, nil)
	// Pages: a limit, and the next page through the cursor.
	var listPage rpc.SessionListResult
	g.call("session/list", rpc.SessionListParams{Limit: 1}, &listPage)
	g.call("session/list", rpc.SessionListParams{Limit: 1, Cursor: listPage.NextCursor}, nil)
	g.call("session/delete", rpc.SessionIDParams{SessionID: s2.Session.SessionID}, nil)
	g.call("shutdown", nil, nil)
	g.notify("exit", nil)
	<-ed.Done

	goldenDocuments(t, g, z)
	goldenConversation(t, g, z)
	goldenRefusal(t, g, z)
	goldenApprovalsAndBuffers(t, g, z)
	goldenSubagents(t, g, z)
	goldenExt(t, g, z)
	goldenReview(t, g, z)
	goldenResources(t, g, z)
	goldenMCPInstructions(t, g, z)
	goldenLimits(t, g, z)
	goldenTasks(t, g, z)
	goldenBranching(t, g, z)
	goldenWorktree(t, g, z)
	goldenUndoUnfinished(t, g, z)
	g.write(z)
}

func ptr[T any](v T) *T { return &v }
