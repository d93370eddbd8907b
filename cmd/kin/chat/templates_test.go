package chat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// notesTemplates is mcp/resources' answer of a server with one template.
var notesTemplates = map[string]any{"servers": []any{map[string]any{"server": "notes", "resources": []any{},
	"resourceTemplates": []any{map[string]any{"uriTemplate": "notes://{project}/{note}", "name": "note"}}}}}

// parts are a turn/start's parts (its input as an array; nil when it sent
// a string).
func parts(p map[string]any) []map[string]any {
	var out []map[string]any
	raw, _ := json.Marshal(p["input"])
	_ = json.Unmarshal(raw, &out)
	return out
}

// /template asks for each variable in order, with the server's values
// (completion/complete carrying the values chosen before), takes free
// text, and attaches the URI the values make (percent-encoded) to the
// next question only.
func TestTemplateFillsAndAttaches(t *testing.T) {
	f, s := fakeChat(t)
	f.set("mcp/resources", notesTemplates)
	f.set("completion/complete", map[string]any{"completion": map[string]any{"values": []string{"kin", "web\x1b[2J"}, "total": 2}})

	s.send("/template @notes:notes://{project}/{note}")
	out := s.out.waitFor(t, "project (1 of 2): ")
	if !strings.Contains(out, "2 part(s) to fill in: project, note.") || !strings.Contains(out, "values: kin, web") || strings.Contains(out, "\x1b[2J") {
		t.Errorf("first step:\n%q", out)
	}
	first := f.waitCall("completion/complete", 1)
	if args(first) != `{"argument":{"name":"project","value":""},"ref":{"type":"ref/resource","uri":"notes://{project}/{note}"},"server":"notes"}` {
		t.Errorf("first completion: %s", args(first))
	}

	s.send("my proj") // not one of the server's values: taken as typed
	s.out.waitFor(t, "note (2 of 2): ")
	second := f.waitCall("completion/complete", 2)
	if args(second["context"]) != `{"arguments":{"project":"my proj"}}` || args(second["argument"]) != `{"name":"note","value":""}` {
		t.Errorf("second completion: %s", args(second))
	}
	s.send("d/é")
	s.out.waitFor(t, "attached to your next question: @notes:notes://my%20proj/d%2F%C3%A9")

	s.send("read it")
	ps := parts(f.waitCall("turn/start", 1))
	if len(ps) != 2 || ps[0]["text"] != "read it" || ps[1]["type"] != "resource" || ps[1]["server"] != "notes" || ps[1]["uri"] != "notes://my%20proj/d%2F%C3%A9" {
		t.Errorf("the question's parts: %v", ps)
	}
	f.notify("turn/completed", map[string]any{"sessionId": "s_fake", "turnId": "t_1", "status": "completed"})
	s.out.waitCount(t, "You> ", 3)
	s.send("and again")
	if p := f.waitCall("turn/start", 2); p["input"] != "and again" {
		t.Errorf("the next question attached again: %v", p)
	}
	s.send("/quit")
	s.wait()
}

// An empty value, /cancel and Ctrl-C attach nothing; Ctrl-C ends the
// template and not the running turn.
func TestTemplateCancels(t *testing.T) {
	f, s := fakeChat(t)
	f.set("mcp/resources", notesTemplates)
	f.set("completion/complete", map[string]any{"completion": map[string]any{"values": []string{}}})

	s.send("/template @notes:notes://{project}/{note}")
	s.out.waitFor(t, "project (1 of 2): ")
	s.send("kin")
	s.out.waitFor(t, "note (2 of 2): ")
	s.send("")
	s.out.waitFor(t, "nothing attached")

	s.send("/template @notes:notes://{project}/{note}")
	s.out.waitCount(t, "project (1 of 2): ", 2)
	s.send("/cancel")
	s.out.waitCount(t, "nothing attached", 2)

	s.send("go")
	if p := f.waitCall("turn/start", 1); p["input"] != "go" {
		t.Errorf("a cancelled template attached: %v", p)
	}
	// The turn runs (no turn/completed): Ctrl-C at the template stops the
	// template only.
	s.send("/template @notes:notes://{project}/{note}")
	s.out.waitCount(t, "project (1 of 2): ", 3)
	s.interrupt()
	s.out.waitFor(t, "nothing attached (interrupted)")
	f.mu.Lock()
	for _, c := range f.reqs {
		if c.method == "turn/cancel" {
			t.Errorf("Ctrl-C at the template cancelled the turn")
		}
	}
	f.mu.Unlock()

	s.send("/template @ghost:x://{a}")
	s.out.waitFor(t, `"ghost" is no connected MCP server with resources`)
	s.send("/template notes")
	s.out.waitFor(t, "/template @server:uriTemplate")
	s.send("/quit")
	s.wait()
}

// The help lists /template.
func TestTemplateInHelp(t *testing.T) {
	_, s := fakeChat(t)
	s.send("/help")
	s.out.waitFor(t, "/template @SERVER:TEMPLATE")
	s.send("/quit")
	s.wait()
}

// A real kin and the notes server: its template filled in with the
// server's own completions, the note read into the question.
func TestTemplateWithRealServer(t *testing.T) {
	e := newEnv(t)
	e.mcp = true
	n := mcptest.NewNotes()
	e.httpServer("notes", mcptest.ServeHTTP(t, n.Server), nil)
	e.Model.Script(modeltest.Reply{Text: []string{"Read the note."}})

	s := e.run(true, nil)
	s.out.waitFor(t, "Approve this operation? [y: Allow once / t: Trust server / N: Deny] ")
	s.send("t")
	s.out.waitFor(t, "notes: connected")
	s.send("/template @notes:notes://{project}/{note}")
	out := s.out.waitFor(t, "project (1 of 2): ")
	if !strings.Contains(out, "values: kin") {
		t.Errorf("the server's projects are not offered:\n%s", out)
	}
	s.send("kin")
	out = s.out.waitFor(t, "note (2 of 2): ")
	if !strings.Contains(out, "values: design") {
		t.Errorf("the notes of the project chosen are not offered:\n%s", out)
	}
	s.send("design")
	s.out.waitFor(t, "attached to your next question: @notes:notes://kin/design")
	s.send("summarise it")
	s.out.waitFor(t, "Read the note.")
	s.send("/quit")
	s.wait()
	if n.Reads("notes://kin/design") != 1 {
		t.Errorf("the note was read %d times", n.Reads("notes://kin/design"))
	}
	reqs := e.Model.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "note design of kin") {
		t.Errorf("the model was not sent the note: %d requests", len(reqs))
	}
}
