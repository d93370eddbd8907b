package acp

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A resource_link whose URI a connected MCP server offers is read from
// that server (listed, or fitting one of its templates), framed as its
// untrusted data; any other non-file link stays a link, and a URI the
// server cannot give refuses the prompt before the model is asked.
func TestAResourceLinkIsReadFromItsServer(t *testing.T) {
	w := newWorld(t)
	n := mcptest.NewNotes()
	url := mcptest.ServeHTTP(t, n.Server)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once")
	var s NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{map[string]any{"type": "http", "name": "notes", "url": url, "headers": []any{}}}}, &s)
	w.model.Script(modeltest.Reply{Text: []string{"ok"}}, modeltest.Reply{Text: []string{"ok"}})
	link := func(uri string) map[string]any {
		return map[string]any{"type": "resource_link", "name": "n", "uri": uri}
	}

	c.prompt(s.SessionID, text("summarise"), link("notes://readme"), link("notes://kin/design"), link("https://example.com/x"))
	got := w.model.Requests()[0].LastUserText()
	for _, want := range []string{"File notes:notes://readme", "The notes of the kin project.", "note design of kin",
		`<untrusted-mcp-result server="notes" tool="resource">`, "[link: n](https://example.com/x)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model was not given %q:\n%s", want, got)
		}
	}
	if n.Reads("notes://readme") != 1 || n.Reads("notes://kin/design") != 1 {
		t.Fatalf("reads %d %d", n.Reads("notes://readme"), n.Reads("notes://kin/design"))
	}
	err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": s.SessionID, "prompt": []any{text("x"), link("notes://kin/a/b")}}, nil)
	if code := rpcCode(t, err); code != -32602 {
		t.Fatalf("a resource the server cannot give: code %d (%v)", code, err)
	}
	if len(w.model.Requests()) != 1 {
		t.Fatal("a refused prompt reached the model")
	}
}

// An MCP result's resource links reach the client as resource_link
// content of the call's final update (and again when the session is
// loaded), so the person can open them.
func TestAResultsResourceLinksAreShownAsResourceLinks(t *testing.T) {
	w := newWorld(t)
	n := mcptest.NewNotes()
	url := mcptest.ServeHTTP(t, n.Server)
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once")
	var s NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{map[string]any{"type": "http", "name": "notes", "url": url, "headers": []any{}}}}, &s)
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "f1", Name: "mcp__notes__find", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"found"}},
	)
	c.prompt(s.SessionID, text("find the design notes"))
	var link map[string]any
	for _, u := range c.updates(UpdateToolCallUpdate) {
		if u["toolCallId"] != "f1" || u["status"] != "completed" {
			continue
		}
		items, _ := u["content"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if b, _ := m["content"].(map[string]any); b != nil && b["type"] == "resource_link" {
				link = b
			}
		}
	}
	if link == nil {
		t.Fatalf("no resource_link in the call's final update: %v", c.updates(UpdateToolCallUpdate))
	}
	if link["uri"] != "notes://kin/design" || link["name"] != "design" {
		t.Errorf("resource_link %v", link)
	}
	if title, _ := link["title"].(string); strings.Contains(title, "\u200b") {
		t.Errorf("an invisible character reached the client: %q", title)
	}
}
