package chat_test

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// >words while a turn streams join it at the next request; /rollback puts
// the edited file back; /fork continues in a copy.
func TestSteerRollbackAndFork(t *testing.T) {
	e := newEnv(t)
	p := e.Write("a.txt", "one\n")
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Working"}, Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}, Hold: hold},
		modeltest.Reply{Text: []string{"Done, and noted."}},
		modeltest.Reply{Text: []string{"In the fork."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("/mode auto-edit")
	s.out.waitFor(t, "Mode: auto-edit")
	s.send("change a.txt")
	s.out.waitFor(t, "Assistant> Working")
	s.send(">keep it short")
	s.out.waitFor(t, "(added: the model reads it at its next step)")
	close(hold)
	s.out.waitFor(t, "You (added)> keep it short")
	s.out.waitFor(t, "Assistant> Done, and noted.")
	reqs := e.Model.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "keep it short") {
		t.Fatalf("the steered words are not in the next request (%d requests)", len(reqs))
	}
	s.out.waitCount(t, "You> ", 3)
	if got, _ := fileContent(t, p); got != "two\n" {
		t.Fatalf("a.txt is %q", got)
	}
	s.send("/rollback")
	s.out.waitFor(t, "[rollback] 1 turn(s) taken back")
	s.out.waitFor(t, "  restored "+p+"\n")
	if got, _ := fileContent(t, p); got != "one\n" {
		t.Errorf("a.txt after /rollback is %q", got)
	}
	s.send("/rollback x")
	s.out.waitFor(t, "/rollback [N]")
	s.send("/fork")
	s.out.waitFor(t, "your next question continues the fork")
	s.send("and now?")
	s.out.waitFor(t, "Assistant> In the fork.")
	s.send("/quit")
	s.wait()
}
