//go:build linux

package chat_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// At the line editor (the real binary at a terminal, the notes server):
// Tab after "/template @" completes the template, Tab at each value
// completes the server's values for what is typed (the note's values
// depend on the project chosen), Esc attaches nothing, and the next
// question gets the note.
func TestBinaryEditorTemplate(t *testing.T) {
	e := newEnv(t)
	n := mcptest.NewNotes()
	e.httpServer("notes", mcptest.ServeHTTP(t, n.Server), nil)
	e.Model.Script(modeltest.Reply{Text: []string{"Read it."}})

	term := e.terminal(t)
	term.await("Approve this operation? [y: Allow once / t: Trust server / N: Deny] ", 1)
	term.typeIn("t\r")
	term.await("[mcp] notes: connected", 1)
	term.awaitPrompt("You> ")

	// (The list kin chat asks for at the connect may still be on its way:
	// /resources lists again, and waits for it.)
	term.typeIn("/resources\r")
	term.await("template: /template", 1)
	term.awaitPrompt("You> ")

	// Esc at a value: nothing attached.
	term.typeIn("/template @no\t")
	term.await("You> /template @notes:notes://{project}/{note} ", 1)
	term.typeIn("\r")
	term.awaitPrompt("project (1 of 2): ")
	term.typeIn("k")
	term.await("project (1 of 2): k", 1)
	term.typeIn("\x1b")
	term.await("nothing attached (Esc)", 1)
	term.awaitPrompt("You> ")

	term.typeIn("/template @notes:notes://{project}/{note}\r")
	term.awaitPrompt("project (1 of 2): ")
	term.typeIn("ot\t") // other: the only project starting "ot"
	term.await("project (1 of 2): other", 1)
	term.typeIn("\r")
	term.awaitPrompt("note (2 of 2): ")
	term.typeIn("\t") // misc: the only note of other
	term.await("note (2 of 2): misc", 1)
	term.typeIn("\r")
	term.await("attached to your next question: @notes:notes://other/misc", 1)
	term.await("[1 attached] You> ", 1)
	term.typeIn("what does it say?\r")
	term.await("Assistant> Read it.", 1)
	term.awaitPrompt("You> ")
	reqs := e.Model.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Raw), "note misc of other") {
		t.Errorf("the model was not sent the note (%d requests)", len(reqs))
	}
	if n.Reads("notes://other/misc") != 1 {
		t.Errorf("the note was read %d times", n.Reads("notes://other/misc"))
	}
	term.quit()
}
