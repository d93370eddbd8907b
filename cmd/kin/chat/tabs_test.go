package chat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// onScreen is what a terminal w columns wide shows of out (written by
// kin chat; the terminal's output processing makes each \n a CR LF).
func onScreen(out string, w int) string {
	v := newVT(w, strings.Count(out, "\n")+2)
	_, _ = v.Write([]byte(strings.ReplaceAll(out, "\n", "\r\n")))
	return v.Text()
}

// A tab moves to the next tab stop but never past the last column, and
// does not wrap: on a terminal, a character after tabs that reach the
// margin is drawn in the last column, over the one drawn there before.
// So a command with tabs between single characters showed only its first
// words in its approval: here "echo hello" was what the person saw of
// "echo hello; . z" (z, a file the model wrote before, is sourced). The
// same goes for a diff's lines. What is shown is what runs: every
// character of it on screen.
func TestApprovalTabsHideNothing(t *testing.T) {
	e := newEnv(t)
	pad := strings.Repeat("\t", 12)
	command := "echo hello" + pad + ";\t.\tz\t "
	e.Write("f.txt", "old\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": command})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "write_file", Arguments: args(map[string]any{"path": "f.txt", "content": "safe" + pad + "r\tm\t \t" + "\n"})}}},
		modeltest.Reply{Text: []string{"Both denied."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("go")
	out := s.out.waitFor(t, "Approve this operation?")
	screen := onScreen(out, 80)
	shown := screen[strings.Index(screen, "Command:"):strings.Index(screen, "Cwd:")]
	if got := strings.Join(strings.Fields(shown), ""); got != "Command:echohello;.z" {
		t.Errorf("the command is shown as %q:\n%s", got, shown)
	}
	s.send("")
	out = s.out.waitCount(t, "Approve this operation?", 2)
	screen = onScreen(out, 80)
	shown = screen[strings.LastIndex(screen, "+++ b/f.txt"):]
	if !strings.Contains(strings.Join(strings.Fields(shown), ""), "+saferm") {
		t.Errorf("the diff is shown as:\n%s", shown)
	}
	s.send("")
	s.out.waitFor(t, "Assistant> Both denied.")
	s.send("/quit")
	s.wait()
	if _, err := os.Stat(filepath.Join(e.WS, "z")); err == nil {
		t.Error("z was made")
	}
}

// A zero-width space, a word joiner or tag characters (invisible on a
// terminal, read by models and by whatever the person pastes a copied line
// into) in the model's answer are spelled out, as kin's approvals and the
// editors spell them out: kin chat kept a shorter list of its own, and
// they showed as nothing.
func TestAnswerSpellsOutInvisibleCharacters(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"Run: echo ok\u200b; \u2060curl\U000E0020x"}})
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("go")
	out := s.out.waitFor(t, "Assistant> Run: echo ok")
	out = s.out.waitFor(t, "x")
	for _, want := range []string{`\u200b`, `\u2060`, `\U000e0020`} {
		if !strings.Contains(out, want) {
			t.Errorf("the answer does not show %s:\n%q", want, out)
		}
	}
	s.send("/quit")
	s.wait()
}

// A carriage return before a line break in a command is part of the word
// before it (bash: "cd sub\r" fails, and the next line runs where kin
// started): the approval showed "cd sub" over "rm -rf ./*", as if the
// removal ran in sub, because kin chat turned "\r\n" into a line break
// like an answer's. An approval shows it spelled out; invisible format
// characters (zero-width space, tag characters) too, as visible.Hidden
// lists them.
func TestApprovalCommandSpellsOutCarriageReturns(t *testing.T) {
	e := newEnv(t)
	command := "cd sub\r\nrm -rf ./*\u200b\U000E0041"
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": command})}}},
		modeltest.Reply{Text: []string{"Denied."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("go")
	out := s.out.waitFor(t, "Approve this operation?")
	screen := onScreen(out, 120)
	shown := screen[strings.Index(screen, "Command:"):strings.Index(screen, "Cwd:")]
	for _, want := range []string{`cd sub\r`, `\u200b`, `\U000e0041`} {
		if !strings.Contains(shown, want) {
			t.Errorf("the approval does not show %s:\n%s", want, shown)
		}
	}
	s.send("")
	s.out.waitFor(t, "Assistant> Denied.")
	s.send("/quit")
	s.wait()
}
