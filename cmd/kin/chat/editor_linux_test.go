//go:build linux

package chat_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// Keys a terminal sends.
const (
	keyUp, keyLeft, keyRight = "\x1b[A", "\x1b[D", "\x1b[C"
	keyHome, keyEnd          = "\x1b[H", "\x1b[F"
	keyCtrlLeft              = "\x1b[1;5D"
	keyAltB, keyAltD         = "\x1bb", "\x1bd"
	keyAltEnter              = "\x1b\r"
)

// lastQuestion is what the model was last asked.
func (e *env) lastQuestion(t *testing.T) string {
	t.Helper()
	reqs := e.Model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not asked")
	}
	return reqs[len(reqs)-1].LastUserText()
}

// The prompt is a line editor: arrows, Home and End, word moves, kill and
// yank edit the line before it is sent; the sent line is what was edited,
// never the keys' escape codes.
func TestBinaryEditorEditing(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Text: []string{"one"}},
		modeltest.Reply{Text: []string{"two"}},
	)
	term := e.terminal(t)
	term.await("You> ", 1)
	// "wrld", Home, "hello ", End, three left, "o": "hello world".
	term.typeIn("wrld" + keyHome + "hello " + keyEnd + keyLeft + keyLeft + keyLeft + "o")
	term.await("You> hello world", 1)
	term.typeIn("\r")
	term.awaitPrompt("You> ")
	if q := e.lastQuestion(t); q != "hello world" {
		t.Errorf("the model was asked %q", q)
	}
	// "world hello", a word back (Ctrl-Left), kill to the end (Ctrl-K),
	// to the start (Ctrl-A), yank (Ctrl-Y), a space: "hello world".
	term.typeIn("world hello" + keyCtrlLeft + "\x0b" + "\x01" + "\x19" + " ")
	term.await("You> hello world", 2)
	term.typeIn("\r")
	term.awaitPrompt("You> ")
	if q := e.lastQuestion(t); q != "hello world" {
		t.Errorf("the model was asked %q", q)
	}
	term.quit()
}

// quit empties the line (Ctrl-U) and types /quit.
func (term *terminal) quit() {
	term.t.Helper()
	term.typeIn("\x15/quit\r")
	term.exitOK()
}

// History is kept across runs in $KIN_HOME/chat_history (0600): Up recalls
// the lines typed before, newest first, in this run and the next; Ctrl-R
// searches them. Answers to approvals are not kept.
func TestBinaryEditorHistory(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Text: []string{"a1"}},
		modeltest.Reply{Text: []string{"a2"}},
		modeltest.Reply{Text: []string{"a3"}},
		modeltest.Reply{Text: []string{"a4"}},
	)
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("first question\r")
	term.await("Assistant> a1", 1)
	term.awaitPrompt("You> ")
	term.typeIn("second question\r")
	term.await("Assistant> a2", 1)
	term.awaitPrompt("You> ")
	term.typeIn(keyUp)
	term.awaitPrompt("You> second question")
	term.typeIn(keyUp)
	term.awaitPrompt("You> first question")
	term.typeIn("\r")
	term.await("Assistant> a3", 1)
	term.awaitPrompt("You> ")
	if q := e.lastQuestion(t); q != "first question" {
		t.Errorf("the model was asked %q", q)
	}
	term.quit()

	file := filepath.Join(e.Home, "chat_history")
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600", file, st.Mode().Perm())
	}
	b, _ := os.ReadFile(file)
	if want := "first question\nsecond question\nfirst question\n/quit\n"; string(b) != want {
		t.Errorf("history file %q, want %q", b, want)
	}

	// The next run recalls them, and Ctrl-R finds one.
	term = e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn(keyUp)
	term.awaitPrompt("You> /quit")
	term.typeIn(keyUp)
	term.awaitPrompt("You> first question")
	term.typeIn("\x15") // Ctrl-U: the line is empty again
	term.awaitPrompt("You> ")
	term.typeIn("\x12sec") // Ctrl-R, then what to look for
	term.await("bck-i-search: sec", 1)
	term.await("You> second question", 1)
	term.typeIn("\r")
	term.await("Assistant> a4", 1)
	if q := e.lastQuestion(t); q != "second question" {
		t.Errorf("the model was asked %q", q)
	}
	term.awaitPrompt("You> ")
	term.quit()
}

// A question goes on in the next line after a trailing backslash, after
// Alt-Enter, and at every newline of a paste (which sends nothing by
// itself); Ctrl-C drops the lines so far. The history keeps a whole
// question as one entry: Up recalls all its lines at once (joined by ⏎),
// and Enter sends them as they were, in this run and the next; a history
// file an older kin wrote (a line per line, trailing backslashes) is read
// the same way.
func TestBinaryEditorMultiline(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Text: []string{"got three lines"}},
		modeltest.Reply{Text: []string{"got the paste"}},
		modeltest.Reply{Text: []string{"got them again"}},
		modeltest.Reply{Text: []string{"got the old one"}},
	)
	file := filepath.Join(e.Home, "chat_history")
	if err := os.WriteFile(file, []byte("old one\\\nold two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("line one\\\r")
	term.awaitPrompt("… ")
	term.typeIn("line two" + keyAltEnter)
	term.await("… line two", 1)
	term.awaitPrompt("… ")
	term.typeIn("line three\r")
	term.await("Assistant> got three lines", 1)
	if q := e.lastQuestion(t); q != "line one\nline two\nline three" {
		t.Errorf("the model was asked %q", q)
	}
	term.awaitPrompt("You> ")

	term.typeIn("dropped\\\r")
	term.awaitPrompt("… ")
	term.typeIn("\x03")
	term.await("(the question's lines above are dropped)", 1)
	term.awaitPrompt("You> ")

	term.typeIn("\x1b[200~pasted a\r\npasted b\x03\x1b[201~")
	term.awaitPrompt("… pasted b")
	term.typeIn(" and typed\r")
	term.await("Assistant> got the paste", 1)
	if q := e.lastQuestion(t); q != "pasted a\npasted b and typed" {
		t.Errorf("the model was asked %q", q)
	}
	if n := len(e.Model.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	term.awaitPrompt("You> ")

	term.typeIn(keyUp + keyUp)
	term.awaitPrompt("You> line one⏎line two⏎line three")
	term.typeIn("\r")
	term.await("Assistant> got them again", 1)
	if q := e.lastQuestion(t); q != "line one\nline two\nline three" {
		t.Errorf("the recalled question went as %q", q)
	}
	term.awaitPrompt("You> ")
	term.quit()
	b, _ := os.ReadFile(file)
	if want := "old one\\\nold two\nline one⏎line two⏎line three\npasted a⏎pasted b and typed\nline one⏎line two⏎line three\n/quit\n"; string(b) != want {
		t.Errorf("history file %q, want %q", b, want)
	}

	// The next run recalls each question whole, the older kin's too.
	term = e.terminal(t)
	term.awaitPrompt("You> ")
	for range 4 {
		term.typeIn(keyUp)
	}
	term.awaitPrompt("You> line one⏎line two⏎line three")
	term.typeIn(keyUp)
	term.awaitPrompt("You> old one⏎old two")
	term.typeIn("\r")
	term.await("Assistant> got the old one", 1)
	if q := e.lastQuestion(t); q != "old one\nold two" {
		t.Errorf("the older kin's question went as %q", q)
	}
	term.awaitPrompt("You> ")
	term.quit()
}

// A question typed while a turn runs is not lost. The answer streams on
// above the line being typed (its unfinished row goes on in place); Enter
// queues the question, and it is sent when the turn ends.
func TestBinaryEditorQuestionDuringTurn(t *testing.T) {
	e := newEnv(t)
	hold1, hold2 := make(chan struct{}), make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Thinking", " it over."}, Hold: hold1},
		modeltest.Reply{Text: []string{"Working", " on it."}, Hold: hold2},
		modeltest.Reply{Text: []string{"About the queued one."}},
	)
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("first\r")
	term.await("Assistant> Thinking", 1)
	term.awaitPrompt("[working] You> ")
	term.typeIn("follow")
	term.awaitPrompt("[working] You> follow")
	close(hold1)
	term.await("Assistant> Thinking it over.\n", 1)
	term.awaitPrompt("You> follow")
	term.typeIn(" up\r")
	term.await("Assistant> Working", 1)
	term.typeIn("queued one\r")
	term.await("[working] You> queued one\n(queued: kin sends it when this turn ends)", 1)
	term.awaitPrompt("[working · 1 queued] You> ")
	close(hold2)
	// The queued line cut the answer's row; the rest goes on below it.
	term.await("Assistant> Working\n[working] You> queued one\n(queued: kin sends it when this turn ends)\nAssistant>  on it.\n", 1)
	term.await("You> queued one  (queued)\nAssistant> About the queued one.", 1)
	term.awaitPrompt("You> ")
	var asked []string
	for _, r := range e.Model.Requests() {
		asked = append(asked, r.LastUserText())
	}
	if strings.Join(asked, "|") != "first|follow up|queued one" {
		t.Errorf("the model was asked %q", asked)
	}
	term.quit()
}

// An approval that comes while a question is being typed takes the prompt
// with an empty line: the keys typed before it never answer it (here a
// lone "y"), Enter denies as always, and the line typed comes back at the
// next question prompt. Ctrl-C on a line clears the line, and nothing else.
func TestBinaryEditorApprovalWhileTyping(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	e.Model.Script(
		modeltest.Reply{Text: []string{"Let me check."}, Hold: hold, Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"It was denied."}},
	)
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("make a file\r")
	term.await("Assistant> Let me check.", 1)
	term.awaitPrompt("[working] You> ")
	term.typeIn("y")
	term.awaitPrompt("[working] You> y")
	close(hold)
	term.awaitPrompt("Approve this operation? [y: Allow once / a: Always allow `touch` commands in this session / p: Always allow `touch` commands in every session / N: Deny] ")
	term.typeIn("\r")
	term.await("[tool] bash: Run touch made … denied", 1)
	term.await("Assistant> It was denied.", 1)
	term.awaitPrompt("You> y")
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("the command ran")
	}
	if strings.Contains(term.plain(), "[working] You> y\n") {
		t.Errorf("the draft was left on screen as a line:\n%s", term.plain())
	}
	term.typeIn("\x03")
	term.awaitPrompt("You> ")
	if strings.Contains(term.plain(), "Ctrl-C again") {
		t.Error("Ctrl-C on a line did more than clear it")
	}
	term.quit()
	if b, _ := os.ReadFile(filepath.Join(e.Home, "chat_history")); string(b) != "make a file\n/quit\n" {
		t.Errorf("history %q: an answer to an approval was kept", b)
	}
}

// One-shot at a terminal: the approval is asked there, and the run ends
// with the turn (0: it completed); Ctrl-C cancels it and exits 130.
func TestBinaryEditorOneShot(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"made it"}},
		modeltest.Reply{Text: []string{"Thinking"}, Hold: hold},
	)
	term := e.terminal(t, "make", "a file")
	term.awaitPrompt("Approve this operation? [y: Allow once / a: Always allow `touch` commands in this session / p: Always allow `touch` commands in every session / N: Deny] ")
	term.typeIn("y\r")
	term.await("Assistant> made it", 1)
	term.exitOK()
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err != nil {
		t.Error("the approved command did not run")
	}
	if out := term.plain(); strings.Contains(out, "You>") || strings.Contains(out, "/help") {
		t.Errorf("a one-shot run offered a prompt:\n%s", out)
	}

	term = e.terminal(t, "think")
	term.await("Assistant> Thinking", 1)
	term.typeIn("\x03")
	term.await("[turn cancelled]", 1)
	err := term.waitExit()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("cancelled one-shot exited with %v, want 130", err)
	}
}

// On a narrow terminal an answer wraps as the terminal wraps it, and one
// that streams while a line is typed goes on where it stopped, also when
// it stopped at the very end of a row or on a wrapped row.
func TestBinaryEditorNarrowTerminal(t *testing.T) {
	e := newEnv(t)
	hold1, hold2 := make(chan struct{}), make(chan struct{})
	e.Model.Script(
		// "Assistant> " and 19 characters fill the 30 columns exactly.
		modeltest.Reply{Text: []string{"0123456789012345678", "abcdefghij"}, Hold: hold1},
		// 24 characters: the row wraps, 5 of them on the second.
		modeltest.Reply{Text: []string{"012345678901234567890123", "XYZ"}, Hold: hold2},
	)
	term := e.terminalSized(t, 30, 20)
	term.awaitPrompt("You> ")
	term.typeIn("one\r")
	term.await("Assistant> 0123456789012345678", 1)
	term.typeIn("draft")
	term.await("[working] You> draft", 1)
	close(hold1)
	term.await("Assistant> 0123456789012345678\nabcdefghij\n", 1)
	term.awaitPrompt("You> draft")
	term.typeIn("\x15two\r")
	term.await("Assistant> 0123456789012345678\n90123", 1)
	term.typeIn("x")
	term.await("[working] You> x", 1)
	close(hold2)
	term.await("Assistant> 0123456789012345678\n90123XYZ\n", 1)
	term.awaitPrompt("You> x")
	term.quit()
}

// A terminal that never says where its cursor is still gets a prompt (a
// moment later) and a working line editor.
func TestBinaryEditorTerminalWithoutCursorReports(t *testing.T) {
	e := newEnv(t)
	e.mute = true
	e.Model.Script(modeltest.Reply{Text: []string{"still here"}})
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	term.typeIn("helo" + keyLeft + "l\r")
	term.await("Assistant> still here", 1)
	if q := e.lastQuestion(t); q != "hello" {
		t.Errorf("the model was asked %q", q)
	}
	term.awaitPrompt("You> ")
	term.quit()
}
