//go:build linux

package chat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A plan is redrawn in place: kin chat goes up as many rows as it counts
// for the plan on screen and erases from there. The plan's words are the
// model's; characters a terminal draws in no column (Hangul's medial
// jamo, U+1160) that kin chat counted as one made it go up past the plan
// and erase what was above it: here the line saying which file was read.
func TestBinaryEditorPlanErasesOnlyItself(t *testing.T) {
	e := newEnv(t)
	e.Write("a.txt", "one\n")
	plan := func(status string) string {
		b, _ := json.Marshal(map[string]any{"entries": []map[string]string{{"content": "read" + strings.Repeat("\u1160", 400), "status": status}}})
		return string(b)
	}
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "r1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p1", Name: "update_plan", Arguments: plan("in_progress")}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p2", Name: "update_plan", Arguments: plan("completed")}}},
		modeltest.Reply{Text: []string{"Done."}},
	)
	term := e.terminalSized(t, 80, 24)
	term.awaitPrompt("You> ")
	term.typeIn("read a.txt\r")
	term.await("Assistant> Done.", 1)
	term.awaitPrompt("You> ")
	out := term.plain()
	if !strings.Contains(out, "[tool] read_file: ") || !strings.Contains(out, "You> read a.txt\n") || !strings.Contains(out, "[plan]\n  [x] read\n") {
		t.Errorf("the plan's redraw erased what was above it:\n%s", out)
	}
	term.quit()
}
