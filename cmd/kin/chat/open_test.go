package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A call's resource link is opened with /open @server:uri (a real kin and
// the notes server): the person reads the text, stripped of control
// characters, with the cuts said, and the model is sent nothing.
func TestOpenAResourceLink(t *testing.T) {
	const token = "chat-5ecret-77aa"
	e := newEnv(t)
	e.mcp = true
	n := mcptest.NewNotes()
	n.Server.AddResource(&mcp.Resource{URI: "notes://evil", Name: "evil", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "notes://evil", MIMEType: "text/plain",
				Text: "\x1b[2Jcleared \u202eevil token " + token}}}, nil
		})
	e.httpServer("notes", mcptest.ServeHTTP(t, n.Server), map[string]string{"X-Notes-Token": token})
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "call_f", Name: "mcp__notes__find", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"See the design note."}})

	s := e.run(true, nil)
	s.out.waitFor(t, "Approve this operation? [y: Allow once / t: Trust server / N: Deny] ")
	s.send("t")
	s.out.waitFor(t, "notes: connected")
	s.send("find the design")
	s.out.waitFor(t, "See the design note.")
	s.send("/saw")
	s.out.waitFor(t, "link: @notes:notes://kin/design")
	s.out.waitFor(t, "/open @server:uri shows a link to you")

	s.send("/open @notes:notes://kin/design")
	out := s.out.waitFor(t, "note design of kin")
	if !strings.Contains(out, "[resource] @notes:notes://kin/design") {
		t.Errorf("no heading:\n%s", out)
	}

	mark := len(s.out.String())
	s.send("/open @notes:notes://evil")
	s.out.waitFor(t, "evil token")
	out = s.out.String()[mark:]
	if strings.Contains(out, "\x1b[2J") || strings.Contains(out, "\u202e") || strings.Contains(out, token) ||
		!strings.Contains(out, "cut: secrets: ") {
		t.Errorf("evil resource shown as:\n%q", out)
	}

	s.send("/open notes:notes://logo.png")
	// the cut's line comes before the resource's own: wait for the last
	s.out.waitFor(t, "cut: resource: ")
	out = s.out.waitFor(t, "image/png, 3 bytes]")
	if !strings.Contains(out, "(3 bytes)") || !strings.Contains(out, "image/png") {
		t.Errorf("binary resource:\n%s", out)
	}

	s.send("/open @ghost:x://y")
	s.out.waitFor(t, `"ghost"`)
	s.send("/open")
	s.out.waitFor(t, "/open @server:uri")

	s.send("/quit")
	s.wait()
	if got := len(e.Model.Requests()); got != 2 {
		t.Errorf("the model got %d requests, want the question's 2", got)
	}
	if n.Reads("notes://kin/design") != 1 || n.Subscribed("notes://kin/design") {
		t.Errorf("the link was read %d times, subscribed %v", n.Reads("notes://kin/design"), n.Subscribed("notes://kin/design"))
	}
}
