//go:build linux

package chat_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// The conversation at the terminal: the model's reasoning streams dimmed
// and folds to one line once the answer starts, the prompt's status says
// how full the model's window is once it is half full, and @path mentions go as file parts
// (turn/started's echo says what was attached).
func TestBinaryEditorConversation(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"models":[{"id":"mock-1","contextWindow":100000,"efforts":["low","high"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Write("a.txt", "alpha\nbravo\ncharlie\n")
	e.Model.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"Reading the question first.", "Then the answer, briefly."}}}, Text: []string{"Done", "."}, Usage: modeltest.Usage{Input: 29900, Output: 100}},
		modeltest.Reply{Text: []string{"It says bravo."}, Usage: modeltest.Usage{Input: 59900, Output: 100}},
		modeltest.Reply{Text: []string{"## Asked\nAbout a.txt."}},
	)
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("think first\r")
	term.await("Thinking> Reading the question first. … (2 lines)\nAssistant> Done.\n", 1)
	if out := term.plain(); strings.Contains(out, "Then the answer, briefly.") {
		t.Errorf("the reasoning did not fold:\n%s", out)
	}
	// (each delta is written where the row goes on, between the prompt's
	// redraws)
	for _, d := range modeltest.SplitText("Then the answer, briefly.", 2) {
		term.awaitRaw(d) // written once, before it folded (the raw bytes keep what was drawn over)
	}
	term.awaitPrompt("You> ")

	term.typeIn("what does @a.txt:2 say?\r")
	term.await("[attached a.txt:2 (", 1)
	term.await("Assistant> It says bravo.", 1)
	term.awaitPrompt("[context 60%] You> ")
	reqs := e.Model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var attached string
	for _, p := range reqs[1].InputParts() {
		if s, _ := p["text"].(string); strings.HasPrefix(s, "<file ") {
			attached = s
		}
	}
	if !strings.HasPrefix(attached, `<file path="a.txt" lines="2">`) || !strings.Contains(attached, "bravo") || strings.Contains(attached, "charlie") {
		t.Errorf("the file part the model got: %q", attached)
	}
	if q := reqs[1].LastUserText(); !strings.Contains(q, "what does @a.txt:2 say?") {
		t.Errorf("the question the model got: %q", q)
	}

	// /model lists and switches (Tab completes the ids and their efforts);
	// the gauge waits for the next response of the new choice. /compact
	// (Tab completes it) says what it did.
	term.typeIn("/model\r")
	term.await("* mock-1  mock-1  responses, 100000 tokens, efforts low/high", 1)
	term.typeIn("/model mo\t")
	term.awaitPrompt("[context 60%] You> /model mock-1 ")
	term.typeIn("h\t")
	term.awaitPrompt("[context 60%] You> /model mock-1 high ")
	term.typeIn("\r")
	term.await("This session now uses mock-1 (effort high).", 1)
	term.awaitPrompt("You> ")
	term.typeIn("/compa\t")
	term.awaitPrompt("You> /compact ")
	term.typeIn("\r")
	term.await("kin summarised the earlier conversation for the model (on request)", 1)
	term.awaitPrompt("You> ")
	if reqs := e.Model.Requests(); len(reqs) != 3 || !strings.Contains(reqs[2].Text(), "It says bravo.") {
		t.Errorf("the compaction's request: %d requests", len(reqs))
	}
	term.typeIn("/sessions\r")
	term.await(`"think first"`, 1)
	id := regexp.MustCompile(`\* (s_\S+)`).FindStringSubmatch(term.plain())
	term.quit()
	if id == nil {
		t.Fatal("no session id on screen")
	}

	// Resumed, the reasoning is folded as it was; the summary comes last,
	// so the window's use is not known until the next response.
	term = e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("/resume " + id[1] + "\r")
	term.await("your next question continues this session", 1)
	term.awaitPrompt("You> ")
	out := term.plain()
	for _, want := range []string{
		"You> think first\nThinking> Reading the question first. … (2 lines)\nAssistant> Done.\n",
		"You> what does @a.txt:2 say?\n[attached a.txt:2 (",
		"[model: mock-1 (effort high)]",
		"[earlier conversation summarised (requested)]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the resumed history lacks %q", want)
		}
	}
	term.quit()
}
