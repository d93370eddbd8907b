package chat_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A subagent's work shows under the delegate call that started it,
// indented; its approval is asked like any other, saying whose it is; and
// /sessions lists its session under its parent's.
func TestSubagentIsShownUnderItsDelegateCall(t *testing.T) {
	e := newEnv(t)
	e.Write("a.go", "package a\n")
	const question, task = "check a.go and note it", "Read a.go, then write notes.txt."
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_read", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_write", Name: "write_file", Arguments: `{"path":"notes.txt","content":"a\n"}`}}},
		modeltest.Reply{Text: []string{"a.go is package a.\n", "I was not allowed to write notes.txt."}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Text: []string{"Asking a subagent."}, Calls: []modeltest.Call{{ID: "call_d", Name: "delegate", Arguments: `{"task":"` + task + `","mode":"agent"}`}}},
		modeltest.Reply{Text: []string{"The subagent could not write."}})
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send(question)
	out := s.out.waitFor(t, "Approve this operation?")
	if !regexp.MustCompile(`\(asked by a subagent, session s_\S+, for call call_d\)\n\[Tool: write_file\]`).MatchString(out) {
		t.Errorf("the subagent's approval does not say whose it is:\n%s", out)
	}
	s.send("n")
	out = s.out.waitFor(t, "Assistant> The subagent could not write.")
	for _, want := range []string{
		"[tool] delegate: Subagent (agent): " + task + " … running\n",
		"  │ [tool] read_file: read_file … completed\n",
		"  │ [tool] write_file: Write notes.txt … denied\n",
		"  │ a.go is package a.\n  │ I was not allowed to write notes.txt.\n",
		"[tool] delegate: Subagent (agent): " + task + " … completed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the screen lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Assistant> a.go is package a.") {
		t.Errorf("the subagent's answer was shown as the assistant's:\n%s", out)
	}

	s.send("/sessions")
	out = s.out.waitFor(t, "↳ ")
	if !regexp.MustCompile(`\* s_\S+  "` + question + `"[^\n]*\n    ↳ s_\S+  "` + regexp.QuoteMeta(task) + `"`).MatchString(out) {
		t.Errorf("/sessions does not list the subagent under its parent:\n%s", out)
	}
	s.send("/quit")
	s.wait()
}
