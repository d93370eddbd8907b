//go:build linux

package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A peer's working day at the terminal: /mode in the prompt, a plan
// updated in place as one checklist, the continue question at the call
// limit, /undo with its report, kin's own question, and Tab completing
// kin's commands.
func TestBinaryEditorPeer(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"maxToolCallsPerTurn":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	a := e.Write("a.txt", "one\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p1", Name: "update_plan", Arguments: `{"entries":[{"content":"read a.txt","status":"in_progress"},{"content":"change it","status":"pending"}]}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p2", Name: "update_plan", Arguments: `{"entries":[{"content":"read a.txt","status":"completed"},{"content":"change it","status":"in_progress"}]}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}},
		modeltest.Reply{Text: []string{"Changed."}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "q1", Name: "ask", Arguments: `{"questions":[{"question":"Which database?","options":["postgres","sqlite"]}]}`}}},
		modeltest.Reply{Text: []string{"sqlite then."}},
	)
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("/mode auto-edit\r")
	term.await("Mode: auto-edit.", 1)
	term.awaitPrompt("[auto-edit] You> ")

	term.typeIn("change a.txt\r")
	term.awaitPrompt("Go on? [y: Continue for 2 more / N: Stop the turn] ")
	term.await("[Call limit] kin has made 2 tool calls in this turn. Continue for 2 more?", 1)
	if out := term.plain(); strings.Count(out, "[plan]") != 1 || !strings.Contains(out, "[plan]\n  [x] read a.txt\n  [~] change it\n") {
		t.Errorf("the plan is not one checklist in its last state:\n%s", out)
	}
	term.awaitRaw("[~] read a.txt") // the first plan was drawn, then replaced in place
	term.typeIn("y\r")
	term.await("[tool] write_file: Write a.txt … completed", 1)
	term.await("Assistant> Changed.", 1)
	term.awaitPrompt("[auto-edit] You> ")
	if got, _ := fileContent(t, a); got != "two\n" {
		t.Fatalf("a.txt is %q", got)
	}

	term.typeIn("/un\t")
	term.awaitPrompt("[auto-edit] You> /undo ")
	term.typeIn("\r")
	term.await("[undo] turn ", 1)
	term.await("  restored "+a+"\n", 1)
	if got, _ := fileContent(t, a); got != "one\n" {
		t.Errorf("a.txt after /undo is %q", got)
	}

	term.awaitPrompt("[auto-edit] You> ")
	term.typeIn("set up the tests\r")
	term.await("[kin asks] Which database?", 1)
	term.awaitPrompt("choose 1-2 (required): ")
	term.typeIn("2\r")
	term.await("Assistant> sqlite then.", 1)
	if out, _ := e.Model.Requests()[5].LastToolOutput(); !strings.HasSuffix(out, "A: sqlite") {
		t.Errorf("the model was told %q", out)
	}
	term.awaitPrompt("[auto-edit] You> ")
	term.quit()
}
