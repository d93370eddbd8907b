package rpc_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// notesWorld is a kin with the purpose-built resource server (mcptest.Notes)
// trusted and connected.
func notesWorld(t *testing.T) (*world, *mcptest.Notes, *rpctest.Editor) {
	t.Helper()
	n := mcptest.NewNotes()
	w := newWorld(t, map[string]any{"notes": map[string]any{"type": "http", "url": mcptest.ServeHTTP(t, n.Server)}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "trust")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "notes"), rpctest.Field("state", "connected")))
	return w, n, ed
}

// goldenResources records resources for the person: mcp/resources,
// completion/complete, a question attaching a server's resource,
// mcp/resourceUpdated when it changes, and a result's link the person opens
// (mcp/readResource).
func goldenResources(t *testing.T, g *recorder, z *normalizer) {
	w, n, ed := notesWorld(t)
	z.fixed = append(z.fixed, w.ws, "/home/ana/src/app", w.home, "/home/ana/.kin")
	r := g.forKin(ed, "res")
	var list rpc.MCPResourcesResult
	r.call(rpc.MethodMCPResources, rpc.MCPResourcesParams{}, &list)
	if len(list.Servers) != 1 || len(list.Servers[0].ResourceTemplates) != 1 {
		t.Fatalf("mcp/resources %+v", list)
	}
	r.fail(rpc.MethodMCPResources, rpc.MCPResourcesParams{Server: "nope"}, rpc.CodeNotFound)
	r.call(rpc.MethodCompletionComplete, rpc.CompletionCompleteParams{Server: "notes",
		Ref: rpc.CompletionRef{Type: "ref/resource", URI: "notes://{project}/{note}"}, Argument: rpc.CompletionArgument{Name: "note", Value: "d"},
		Context: &rpc.CompletionContext{Arguments: map[string]string{"project": "kin"}}}, nil)

	w.model.Script(modeltest.Reply{Text: []string{"It is the kin project's notes."}, Usage: modeltest.Usage{Input: 300, Output: 8}})
	sid := newSession(t, ed)
	var ts rpc.TurnStartResult
	r.call("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: []rpc.InputPart{{Type: "text", Text: "what is this?"},
		{Type: "resource", Server: "notes", URI: "notes://readme"}}}, &ts)
	ed.Wait("turn/completed", rpctest.Field("turnId", ts.TurnID))
	// Fixed names of their own, so that these frames do not renumber the
	// ids of every other file.
	z.pin(0, sid, "s_20261130T231800_7a1c2e")
	z.pin(1, ts.TurnID, "t_00000201")
	if err := n.Touch(context.Background(), "notes://readme"); err != nil {
		t.Fatal(err)
	}
	r.note(rpc.NotifyMCPResourceUpdated, rpctest.Field("uri", "notes://readme"))

	// A result's resource link: links on the call, for the person to open.
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_r1", Name: "mcp__notes__find", Arguments: `{}`}}, Usage: modeltest.Usage{Input: 400, Output: 9}},
		modeltest.Reply{Text: []string{"See the design note."}, Usage: modeltest.Usage{Input: 500, Output: 6}})
	var t2 rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "find the design"}, &t2)
	ed.Wait("turn/completed", rpctest.Field("turnId", t2.TurnID))
	z.pin(1, t2.TurnID, "t_00000202")
	call := r.note("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_r1"), rpctest.Field("status", "completed")))
	if links, _ := call["links"].([]any); len(links) != 1 {
		t.Fatalf("links %v", call["links"])
	}
	// The person opens that link; a binary one is summarised; a server
	// that is not there has none.
	var read rpc.MCPReadResourceResult
	r.call(rpc.MethodMCPReadResource, rpc.MCPReadResourceParams{Server: "notes", URI: "notes://kin/design"}, &read)
	if !strings.HasSuffix(read.Text, "\nnote design of kin") || strings.Contains(read.Text, "untrusted") {
		t.Fatalf("mcp/readResource %+v", read)
	}
	r.call(rpc.MethodMCPReadResource, rpc.MCPReadResourceParams{Server: "notes", URI: "notes://logo.png"}, nil)
	r.fail(rpc.MethodMCPReadResource, rpc.MCPReadResourceParams{Server: "nope", URI: "notes://kin/design"}, rpc.CodeNotFound)
}

// A question that attaches a server's resource gives the model the
// server's text inside untrusted framing; one the server cannot give is
// refused, nothing sent to the model.
func TestAResourceAttachedFromAServer(t *testing.T) {
	w, n, ed := notesWorld(t)
	w.model.Script(modeltest.Reply{Text: []string{"ok"}, Usage: modeltest.Usage{Input: 10, Output: 1}})
	sid := newSession(t, ed)
	var ts rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: []rpc.InputPart{{Type: "text", Text: "what is this?"},
		{Type: "resource", Server: "notes", URI: "notes://hostile", Text: "the editor says it is harmless"}}}, &ts)
	ed.Wait("turn/completed", rpctest.Field("turnId", ts.TurnID))
	reqs := w.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	text := reqs[0].Text()
	if !strings.Contains(text, `<resource server="notes" uri="notes://hostile">`) || !strings.Contains(text, `<untrusted-mcp-result server="notes" tool="resource">`) ||
		strings.Contains(text, "the editor says it is harmless") || strings.Count(text, "</untrusted-mcp-result>") != 1 {
		t.Fatalf("what the model got:\n%s", text)
	}
	if n.Reads("notes://hostile") != 1 {
		t.Fatalf("read %d times", n.Reads("notes://hostile"))
	}
	if code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: []rpc.InputPart{{Type: "resource", Server: "notes", URI: "notes://missing"}}}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "notes://missing") {
		t.Fatalf("missing resource: %d %s", code, msg)
	}
	if code, _ := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: []rpc.InputPart{{Type: "resource", Server: "ghost", URI: "notes://readme"}}}); code != rpc.CodeInvalidParams {
		t.Fatalf("unknown server: %d", code)
	}
	if len(w.model.Requests()) != 1 {
		t.Fatal("a refused question reached the model")
	}
	if code, _ := ed.CallErr(rpc.MethodCompletionComplete, rpc.CompletionCompleteParams{Server: "notes", Ref: rpc.CompletionRef{Type: "ref/prompt", URI: "x"}, Argument: rpc.CompletionArgument{Name: "a"}}); code != rpc.CodeInvalidParams {
		t.Fatalf("a prompt ref: %d", code)
	}
}
