package chat_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// kin chat shows the reasoning summary (dimmed, apart from the answer) and
// how full the window is, lists and switches models, and compacts on
// request.
func TestModelsReasoningAndCompaction(t *testing.T) {
	e := newEnv(t)
	settings := fmt.Sprintf(`{"models":[{"id":"mock-1","contextWindow":100000,"efforts":["low","high"]},
	  {"id":"local","contextWindow":8000,"api":"chat","baseUrl":%q}]}`, e.Model.URL())
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"Thinking it over."}}}, Text: []string{"Done."}, Usage: modeltest.Usage{Input: 900, Output: 100}},
		modeltest.Reply{Text: []string{"## Asked\nA question."}},
		modeltest.Reply{Text: []string{"Local answer."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("hello")
	out := s.out.waitFor(t, "[context 1000 of 100000 tokens, 1%]")
	if !strings.Contains(out, "Thinking> Thinking it over.\nAssistant> Done.") {
		t.Errorf("reasoning and answer:\n%s", out)
	}
	s.send("/model")
	s.out.waitFor(t, "* mock-1  mock-1  responses, 100000 tokens, efforts low/high")
	s.send("/model local")
	s.out.waitFor(t, "This session now uses local.")
	s.send("/model mock-1 turbo")
	s.out.waitFor(t, `takes effort low, high, not "turbo"`)
	s.send("/compact")
	s.out.waitFor(t, "kin summarised the earlier conversation for the model (on request)")
	s.send("and now?")
	s.out.waitFor(t, "Assistant> Local answer.")
	if reqs := e.Model.Requests(); len(reqs) != 3 || reqs[2].API != "chat" || !strings.Contains(reqs[2].Text(), "## Asked\nA question.") {
		t.Errorf("requests: %d, last %+v", len(reqs), reqs[len(reqs)-1])
	}
	s.send("/quit")
	s.wait()
}

// @path mentions go as file parts in a piped run too; a file kin may not
// attach (outside the workspace) refuses the question, saying why, and the
// model is not asked.
func TestMentionsAttachFiles(t *testing.T) {
	e := newEnv(t)
	e.Write("notes.md", "kin reads me\n")
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("not for the model\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"Read it."}})
	s := e.run(false, nil)
	s.send("summarise @notes.md.")
	s.out.waitFor(t, "Assistant> Read it.")
	s.send("and @" + outside)
	s.err.waitFor(t, "input[1] (file)")
	s.send("/quit")
	s.wait()
	if out := s.out.String(); !strings.Contains(out, "[attached notes.md (") {
		t.Errorf("no attached line:\n%s", out)
	}
	reqs := e.Model.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "kin reads me") {
		t.Fatalf("requests: %d", len(reqs))
	}
	for _, r := range reqs {
		if strings.Contains(r.Text(), "not for the model") {
			t.Error("a file outside the workspace reached the model")
		}
	}
}
