package chat_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A call's id is the model service's (kin keeps the one the model sent
// when it is new to the session): /saw shows it, and /saw with no finished
// call names the last one, cleaned like any other text from outside. Here
// the id retitles the terminal.
func TestSawCleansTheCallID(t *testing.T) {
	const id = "call_\x1b]0;owned\x07x"
	e := newEnv(t)
	e.mcp = true
	n := mcptest.NewNotes()
	e.httpServer("notes", mcptest.ServeHTTP(t, n.Server), nil)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: id, Name: "mcp__notes__find", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"See the design note."}})
	s := e.run(true, nil)
	s.out.waitFor(t, "Approve this operation? [y: Allow once / t: Trust server / N: Deny] ")
	s.send("t")
	s.out.waitFor(t, "notes: connected")
	s.send("find the design")
	s.out.waitFor(t, "See the design note.")
	s.send("/saw")
	s.out.waitFor(t, "[what the model saw]")
	s.out.waitFor(t, "link: @notes:notes://kin/design")
	s.send("/saw nothing")
	s.out.waitFor(t, "is the last)")
	s.send("/quit")
	s.wait()
	if out := s.out.String(); strings.Contains(out, "\x1b]") || !strings.Contains(out, `call_\x1b]0;owned\ax`) {
		t.Errorf("the call's id was shown as:\n%q", out)
	}
}
