//go:build linux

package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// awaitRawAfter waits until what kin chat wrote holds substr after the
// last marker (both as written, colours and all).
func (term *terminal) awaitRawAfter(marker, substr string) {
	term.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		changed := term.raw.next()
		s := term.raw.String()
		if i := strings.LastIndex(s, marker); i >= 0 && strings.Contains(s[i+len(marker):], substr) {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("timed out waiting for %q after %q in what kin chat wrote:\n%q", substr, marker, s)
		}
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
	}
}

// Keys that reach kin chat after an approval's block but before the
// terminal has shown it never answer it: the editor asks the terminal
// where its cursor is before it draws the prompt, and what the person
// typed before the terminal's answer was typed before the question was on
// their screen (over ssh, keys typed before the block arrived are still on
// their way). Here the terminal does not answer (kin chat goes on after a
// second): a queued "y" and Enter typed then, and the rest of a paste that
// began before the question, are dropped; the prompt waits, and Enter
// denies as always.
func TestBinaryEditorApprovalKeysBeforeItShows(t *testing.T) {
	e := newEnv(t)
	e.mute = true
	hold1, hold2 := make(chan struct{}), make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Let me check."}, Hold: hold1, Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"It was denied."}},
		modeltest.Reply{Text: []string{"Once more."}, Hold: hold2, Calls: []modeltest.Call{{ID: "c2", Name: "bash", Arguments: args(map[string]any{"command": "touch again"})}}},
		modeltest.Reply{Text: []string{"Denied again."}},
	)
	const prompt = "Approve this operation? [y: Allow once / a: Always allow `touch` commands in this session / p: Always allow `touch` commands in every session / N: Deny] "
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("make a file\r")
	term.await("Assistant> Let me check.", 1)
	term.awaitPrompt("[working] You> ")
	close(hold1)
	term.awaitRawAfter("[Tool: bash]", "\x1b[6n") // the approval's read asks where the cursor is
	term.typeIn("y\r")
	term.awaitPrompt(prompt)
	term.typeIn("\r")
	term.await("[tool] bash: Run touch made … denied", 1)
	term.await("Assistant> It was denied.", 1)
	term.awaitPrompt("You> ")

	term.typeIn("again\r")
	term.await("Assistant> Once more.", 1)
	term.awaitPrompt("[working] You> ")
	term.typeIn("\x1b[200~a log\n") // a paste, on its way when the question comes
	// Its first line is read before the question comes (on a loaded
	// machine the question could otherwise be first, and the whole paste
	// typed before it showed).
	term.awaitRawAfter("Once more.", "a log\r\n")
	close(hold2)
	term.awaitRawAfter("touch again", "\x1b[6n")
	term.typeIn("y\nmore\x1b[201~")
	term.awaitPrompt(prompt)
	term.typeIn("\r")
	term.await("[tool] bash: Run touch again … denied", 1)
	term.await("Assistant> Denied again.", 1)
	term.awaitPrompt("… ") // the paste's first line waits for the rest of its question
	term.typeIn("\x03")
	term.awaitPrompt("You> ")
	for _, f := range []string{"made", "again"} {
		if _, err := os.Stat(filepath.Join(e.WS, f)); err == nil {
			t.Errorf("touch %s ran: keys typed before its approval showed answered it", f)
		}
	}
	term.quit()
}

// A paste of more than 128K characters over several lines: each line ends
// a read, and the editor asks the terminal where its cursor is before the
// next one; a terminal a little slow to answer (over ssh) answers after
// the rest of the paste. The editor gave up on the answer past 128K
// characters (a panic, the terminal left raw, the session's turn lost);
// now it waits for the answer alone.
func TestBinaryEditorLongPaste(t *testing.T) {
	e := newEnv(t)
	e.slow = 10 * time.Millisecond
	e.Model.Script(modeltest.Reply{Text: []string{"Read it."}})
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	line := strings.Repeat("0123456789abcdé", 64) + "\n" // 1024 characters, one of 2 bytes in 16
	term.typeIn("\x1b[200~first\n" + strings.Repeat(line, 200) + "last\x1b[201~")
	// 200 round trips to the terminal, one a line, each one at least
	// e.slow: on a loaded 2-core machine each took 100-160 ms, and 20 s
	// saw 126 of the 200 lines. This test is about the answer, not the
	// speed: it waits as long as 200 of them may take.
	term.awaitPromptWithin("… last", 2*time.Minute)
	term.typeIn("\r")
	term.await("Assistant> Read it.", 1)
	term.awaitPrompt("You> ")
	if q := e.lastQuestion(t); !strings.HasPrefix(q, "first\n"+line) || !strings.HasSuffix(q, line+"last") || len(q) != len("first\n")+200*len(line)+len("last") {
		t.Errorf("the model was asked %d bytes, not the paste", len(q))
	}
	term.quit()
}

// A pasted line of 40,000 characters (minified code, a long log line): the
// editor's work for each character grows with the line, and it took 25 s
// and more (kin chat answering nothing meanwhile). The line goes to the
// editor in pieces and to the model whole, as pasted.
func TestBinaryEditorLongPastedLine(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"Read it."}})
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	line := "start " + strings.Repeat("0123456789abcdé,", 2500) + " end"
	term.typeIn("look: \x1b[200~" + line + "\x1b[201~\r")
	term.await("Assistant> Read it.", 1)
	if q := e.lastQuestion(t); q != "look: "+line {
		t.Errorf("the model was asked %d bytes, not the question (%d)", len(q), len("look: "+line))
	}
	term.awaitPrompt("You> ")
	term.quit()
}
