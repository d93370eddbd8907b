package chat_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// The plan as the model updates it, /plan, /mode, an edit applied unasked
// in auto-edit mode and /undo putting it back: kin chat against the real
// service.
func TestPlanModeAndUndo(t *testing.T) {
	e := newEnv(t)
	p := e.Write("a.txt", "one\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p1", Name: "update_plan", Arguments: `{"entries":[{"content":"read a.txt","status":"completed"},{"content":"change it","status":"in_progress"}]}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}},
		modeltest.Reply{Text: []string{"Changed."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("/mode auto-edit")
	s.out.waitFor(t, "Mode: auto-edit. File edits inside the workspace are applied without asking")
	s.send("change a.txt")
	s.out.waitFor(t, "[plan]\n  [x] read a.txt\n  [~] change it\n")
	s.out.waitFor(t, "[tool] write_file: Write a.txt … completed")
	s.out.waitFor(t, "Assistant> Changed.")
	s.out.waitCount(t, "You> ", 3) // the turn has ended
	if strings.Contains(s.out.String(), "Approve this operation?") {
		t.Error("auto-edit asked for an edit in the workspace")
	}
	if got, _ := fileContent(t, p); got != "two\n" {
		t.Fatalf("a.txt is %q", got)
	}
	s.send("/plan")
	s.out.waitCount(t, "  [~] change it\n", 2)
	s.send("/undo")
	s.out.waitFor(t, "[undo] turn ")
	s.out.waitFor(t, "  restored "+p+"\n")
	if got, _ := fileContent(t, p); got != "one\n" {
		t.Errorf("a.txt after /undo is %q", got)
	}
	s.send("/frobnicate")
	s.out.waitFor(t, "unknown command: /frobnicate")
	s.send("/commands")
	s.out.waitFor(t, "/undo [turnId]")
	s.send("/quit")
	s.wait()
}

// An MCP prompt's command shows the text it asks, then the turn.
func TestPromptCommandShowsWhatItAsks(t *testing.T) {
	f, conn := newFake(t)
	f.set("turn/start", map[string]any{"turnId": "t_9", "command": map[string]any{"name": "docs:review",
		"text": "Sent the text of /docs:review as the question.", "inserted": "Review main.go for bugs."}})
	s := run(t, conn, true, nil)
	s.out.waitFor(t, "You> ")
	s.send("/docs:review main.go")
	s.out.waitFor(t, "/docs:review asks: Review main.go for bugs.")
	f.notify("turn/delta", map[string]any{"sessionId": "s_fake", "turnId": "t_9", "text": "Looks fine."})
	s.out.waitFor(t, "Assistant> Looks fine.")
	if sent := f.waitCall("turn/start", 1); sent["input"] != "/docs:review main.go" {
		t.Errorf("turn/start %v", sent)
	}
}

// Piped, kin chat says no one can fill in forms: kin declines its own
// question at once, and the model hears so.
func TestPipedKinQuestionIsDeclinedHeadless(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "q1", Name: "ask", Arguments: `{"questions":[{"question":"Which database?","options":["postgres","sqlite"]}]}`}}},
		modeltest.Reply{Text: []string{"Assuming postgres."}},
	)
	s := e.run(false, nil)
	s.send("set up the tests")
	s.out.waitFor(t, "Assistant> Assuming postgres.")
	s.in.Close()
	s.wait()
	if strings.Contains(s.out.String(), "[kin asks]") {
		t.Errorf("a piped run was asked:\n%s", s.out.String())
	}
	if out, _ := e.Model.Requests()[1].LastToolOutput(); !strings.Contains(out, "no person can answer") {
		t.Errorf("the model was told %q", out)
	}
}

// Interactive, kin's question is a form headed by kin.
func TestKinQuestionIsAskedInTheTerminal(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "q1", Name: "ask", Arguments: `{"questions":[{"question":"Which database?","options":["postgres","sqlite"]}]}`}}},
		modeltest.Reply{Text: []string{"sqlite then."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("set up the tests")
	s.out.waitFor(t, "[kin asks] Which database?")
	// the model may ask for anything: the form says its answer goes there
	s.out.waitFor(t, "What you answer goes to the model and stays in this session.")
	s.out.waitFor(t, "Which database?")
	s.send("2")
	s.out.waitFor(t, "Assistant> sqlite then.")
	if out, _ := e.Model.Requests()[1].LastToolOutput(); !strings.HasSuffix(out, "A: sqlite") {
		t.Errorf("the model was told %q", out)
	}
	s.send("/quit")
	s.wait()
}

// commands/changed: kin chat asks for the list again (for completion).
func TestCommandsChangedListsAgain(t *testing.T) {
	f, conn := newFake(t)
	f.set("commands/list", map[string]any{"commands": []map[string]any{{"name": "undo", "description": "Undo", "source": "kin"}}})
	s := run(t, conn, true, nil)
	s.out.waitFor(t, "You> ")
	s.send("/new")
	f.waitCall("commands/list", 1)
	f.notify("commands/changed", map[string]any{})
	if got := f.waitCall("commands/list", 2); got["sessionId"] != "s_fake" {
		t.Errorf("commands/list %v", got)
	}
	s.send("/quit")
	s.wait()
}

// kin chat declares no buffer capabilities (it has no buffers): kin never
// asks it to apply an edit, and the reload notices that follow kin's own
// writes are taken quietly.
func TestNoBuffersReloadNoticesQuiet(t *testing.T) {
	f, s := fakeChat(t)
	init := f.waitCall("initialize", 1)
	if caps, _ := init["capabilities"].(map[string]any); caps == nil || caps["textDocuments"] != nil {
		t.Errorf("initialize capabilities %v", init["capabilities"])
	}
	before := s.out.String()
	f.notify("workspace/didChangeFiles", map[string]any{"changes": []map[string]any{{"uri": "file:///ws/a.go", "path": "/ws/a.go", "type": "changed"}}})
	s.send("/help")
	out := s.out.waitFor(t, "/quit")
	if strings.Contains(out[len(before):], "a.go") {
		t.Errorf("a reload notice was shown:\n%s", out[len(before):])
	}
	s.send("/quit")
	s.wait()
}

// In ask mode a call that would change something is refused, and the line
// says why in kin's words (the reason comes from the service, so every
// front end says the same).
func TestAskModeRefusalSaysWhy(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}},
		modeltest.Reply{Text: []string{"I may not."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("/mode ask")
	s.out.waitFor(t, "Mode: ask.")
	s.send("write a.txt")
	s.out.waitFor(t, "Assistant> I may not.")
	if out := s.out.String(); !strings.Contains(out, "… denied (refused: the session is in ask mode") {
		t.Errorf("the refusal does not say why:\n%s", out)
	}
	s.send("/quit")
	s.wait()
}
