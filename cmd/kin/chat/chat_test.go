package chat_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/cmd/kin/chat"
)

// The answer is shown while it streams: the first delta is on screen while
// the model still holds the rest back.
func TestStreamedAnswer(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	e.Model.Script(modeltest.Reply{Text: []string{"Hel", "lo ", "world."}, Hold: hold})
	s := e.run(false, nil)
	s.send("say hello")
	s.out.waitFor(t, "You> say hello\nAssistant> Hel")
	if strings.Contains(s.out.String(), "world") {
		t.Fatal("the whole answer was shown before it streamed")
	}
	close(hold)
	s.out.waitFor(t, "Assistant> Hello world.\n")
	s.in.Close()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
}

// y runs the command shown; Enter denies the write shown as a diff.
func TestApprovalYesRunsEnterDenies(t *testing.T) {
	e := newEnv(t)
	notes := e.Write("notes.txt", "old\n")
	made := filepath.Join(e.WS, "made-by-bash")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made-by-bash"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "write_file", Arguments: args(map[string]any{"path": "notes.txt", "content": "new\n"})}}},
		modeltest.Reply{Text: []string{"All ", "done."}},
	)
	s := e.run(true, nil)
	s.out.waitFor(t, "You> ")
	s.send("touch and write")

	out := s.out.waitFor(t, "Approve this operation? [y: Allow once / a: ")
	for _, want := range []string{"[Tool: bash] Run touch made-by-bash\n", "Command: touch made-by-bash\n", "Cwd: " + e.WS + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("approval block lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(made); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	s.send("y")
	s.out.waitFor(t, "[tool] bash: Run touch made-by-bash … completed")
	if _, err := os.Stat(made); err != nil {
		t.Errorf("approved command did not run: %v", err)
	}

	out = s.out.waitCount(t, "Approve this operation?", 2)
	for _, want := range []string{"[Tool: write_file] Write notes.txt\n", "--- a/notes.txt\n", "+++ b/notes.txt\n", "\n-old\n", "\n+new\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("write approval lacks %q:\n%s", want, out)
		}
	}
	s.send("") // Enter denies
	s.out.waitFor(t, "[tool] write_file: Write notes.txt … denied")
	s.out.waitFor(t, "Assistant> All done.")
	if got, _ := fileContent(t, notes); got != "old\n" {
		t.Errorf("a denied write changed the file: %q", got)
	}
	s.send("/quit")
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// "p" keeps the grant for every session: it is written to grants.json and
// listed as permanent.
func TestPermanentAllow(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo kept"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	s := e.run(true, nil)
	s.send("echo once")
	s.out.waitFor(t, "p: Always allow `echo` commands in every session / N: Deny]")
	s.send("p")
	s.out.waitFor(t, "Assistant> ok")
	s.send("/grants")
	s.out.waitFor(t, "  permanent  ")
	b, err := os.ReadFile(filepath.Join(e.Home, "grants.json"))
	if err != nil || !strings.Contains(string(b), "bash:echo") {
		t.Errorf("grants.json: %v %s", err, b)
	}
	s.send("/quit")
	s.wait()
}

// "a" grants the scope shown; /grants lists it and /grants revoke removes it.
func TestAlwaysAllowAndGrants(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo first-run"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "bash", Arguments: args(map[string]any{"command": "echo second-run"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	s := e.run(true, nil)
	s.send("echo twice")
	out := s.out.waitFor(t, "Approve this operation? [y: Allow once / a: ")
	label := regexp.MustCompile(`a: ([^/]*) / p: `).FindStringSubmatch(out)
	if label == nil || label[1] != "Always allow `echo` commands in this session" {
		t.Fatalf("no grant label in %q", out)
	}
	s.send("a")
	s.out.waitFor(t, "    second-run\n")
	s.out.waitFor(t, "Assistant> ok")
	s.out.waitCount(t, "You> ", 2)
	if n := strings.Count(s.out.String(), "Approve this operation?"); n != 1 {
		t.Errorf("asked %d times; the grant should have answered the second call", n)
	}
	s.send("/grants")
	out = s.out.waitFor(t, "(bash:echo)")
	id := regexp.MustCompile(`(?m)^(\S+)  session  `).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no grant row in:\n%s", out)
	}
	s.send("/grants revoke " + id[1])
	s.out.waitFor(t, "Revoked "+id[1]+".")
	s.send("/grants")
	s.out.waitFor(t, "No standing grants.")
	s.send("/quit")
	s.wait()
}

// Piped input denies every approval unless --approve-all was given.
func TestPipedApprovals(t *testing.T) {
	for _, approveAll := range []bool{false, true} {
		name := "deny"
		if approveAll {
			name = "approve-all"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			made := filepath.Join(e.WS, "made")
			e.Model.Script(
				modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
				modeltest.Reply{Text: []string{"finished"}},
			)
			s := e.run(false, func(o *chat.Options) { o.ApproveAll = approveAll })
			s.send("make it")
			s.in.Close()
			if code := s.wait(); code != 0 {
				t.Errorf("exit %d, want 0 (the turn completed)", code)
			}
			out := s.out.String()
			if !strings.Contains(out, "Command: touch made\n") {
				t.Errorf("no approval block:\n%s", out)
			}
			_, err := os.Stat(made)
			if approveAll {
				if !strings.Contains(out, "approved (--approve-all)") || err != nil {
					t.Errorf("--approve-all did not run the command (%v):\n%s", err, out)
				}
				return
			}
			if !strings.Contains(out, "denied (non-interactive; use --approve-all)\n") {
				t.Errorf("no denial line:\n%s", out)
			}
			if err == nil {
				t.Error("the command ran without approval")
			}
		})
	}
}

// A failed turn makes piped input exit 1.
func TestPipedFailedTurnExitsOne(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{HTTPStatus: 400, ErrorMessage: "bad things"})
	s := e.run(false, nil)
	s.send("fail please")
	s.in.Close()
	if code := s.wait(); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if out := s.out.String(); !strings.Contains(out, "[turn failed]") {
		t.Errorf("no failure line:\n%s", out)
	}
}

// Ctrl-C cancels the streaming turn (the same channel runChat feeds from
// SIGINT); a second Ctrl-C at the idle prompt exits.
func TestInterruptCancelsTurnThenExits(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(
		modeltest.Reply{Text: []string{"Thinking", " forever"}, Hold: hold},
		modeltest.Reply{Text: []string{"second answer"}},
	)
	s := e.run(true, nil)
	s.send("think")
	s.out.waitFor(t, "Assistant> Thinking")
	s.interrupt()
	s.out.waitFor(t, "[turn cancelled]")
	s.out.waitCount(t, "You> ", 2)
	// The session goes on after a cancel.
	s.send("again")
	s.out.waitFor(t, "Assistant> second answer")
	s.out.waitCount(t, "You> ", 3)
	s.interrupt()
	s.out.waitFor(t, "(Ctrl-C again to exit, or /quit)")
	s.interrupt()
	if code := s.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// Ctrl-C while an approved command runs kills it and ends the turn.
func TestInterruptStopsRunningCommand(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo started; sleep 60; touch too-late"})}}})
	s := e.run(true, nil)
	s.send("slow")
	s.out.waitFor(t, "Approve this operation?")
	s.send("y")
	s.out.waitFor(t, "    started\n")
	s.interrupt()
	s.out.waitFor(t, "failed (killed by kin after the turn was cancelled")
	s.out.waitFor(t, "[turn cancelled]")
	if _, err := os.Stat(filepath.Join(e.WS, "too-late")); err == nil {
		t.Error("the command ran on after the cancel")
	}
	s.send("/quit")
	s.wait()
}

// A command that failed says how it ended on its line, however much of
// its output is shown (here more than the lines shown).
func TestAFailedCommandShowsItsExitStatus(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "seq 1 40; exit 3"})}}},
		modeltest.Reply{Text: []string{"It failed."}},
	)
	s := e.run(true, nil)
	s.send("run it")
	s.out.waitFor(t, "Approve this operation?")
	s.send("y")
	out := s.out.waitFor(t, "Assistant> It failed.")
	if !strings.Contains(out, "… failed (exit status 3)\n") {
		t.Errorf("the failed command's line does not say how it ended:\n%s", out)
	}
	s.send("/quit")
	s.wait()
}

// Ctrl-C at an approval prompt denies it; the turn goes on.
func TestInterruptAtApprovalCancels(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch nope"})}}})
	s := e.run(true, nil)
	s.send("do it")
	s.out.waitFor(t, "Approve this operation?")
	s.interrupt()
	s.out.waitFor(t, "[turn cancelled]")
	if _, err := os.Stat(filepath.Join(e.WS, "nope")); err == nil {
		t.Error("the command ran")
	}
	s.send("/quit")
	s.wait()
}

// /resume redraws an earlier session and the next question continues it.
func TestResumeShowsHistory(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo kiwi-out"})}}},
		modeltest.Reply{Text: []string{"Noted: ", "kiwi."}},
	)
	first := e.run(false, func(o *chat.Options) { o.ApproveAll = true })
	first.send("remember the word kiwi")
	first.in.Close()
	if code := first.wait(); code != 0 {
		t.Fatalf("first run exit %d", code)
	}

	e.Model.Script(modeltest.Reply{Text: []string{"It was kiwi."}})
	s := e.run(true, nil)
	s.send("/sessions")
	out := s.out.waitFor(t, `"remember the word kiwi"`)
	id := regexp.MustCompile(`s_\S+`).FindString(out)
	if id == "" {
		t.Fatalf("no session id in:\n%s", out)
	}
	s.send("/resume " + id)
	out = s.out.waitFor(t, "your next question continues this session")
	for _, want := range []string{
		"You> remember the word kiwi\n",
		"[tool] bash: Run echo kiwi-out … completed\n    kiwi-out\n",
		"[approval] Run echo kiwi-out: allowed once",
		"Assistant> Noted: kiwi.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	s.send("which word?")
	s.out.waitFor(t, "Assistant> It was kiwi.")
	reqs := e.Model.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(string(last.Raw), "remember the word kiwi") {
		t.Errorf("the resumed question was sent without the history: %s", last.Raw)
	}
	s.send("/sessions")
	s.out.waitFor(t, "* "+id)
	s.send("/quit")
	s.wait()
}

// Without a key, piped input says what to set and exits 2; at a terminal
// it says so and keeps the prompt, where commands still work.
func TestMissingKey(t *testing.T) {
	const want = "kin: set OPENAI_API_KEY"
	t.Run("piped", func(t *testing.T) {
		e := newEnv(t)
		delete(e.Vars, "OPENAI_API_KEY")
		s := e.run(false, nil)
		s.send("hello")
		if code := s.wait(); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		if got := s.err.String(); !strings.HasPrefix(got, want) {
			t.Errorf("stderr %q, want it to start with %q", got, want)
		}
		if len(e.Model.Requests()) != 0 {
			t.Error("the model was called")
		}
	})
	t.Run("interactive", func(t *testing.T) {
		e := newEnv(t)
		delete(e.Vars, "OPENAI_API_KEY")
		s := e.run(true, nil)
		s.out.waitFor(t, want)
		s.out.waitFor(t, "You> ")
		s.send("/help")
		s.out.waitFor(t, "/resume ID")
		s.send("hello")
		s.out.waitCount(t, "OPENAI_API_KEY", 2)
		s.send("/quit")
		if code := s.wait(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
}

// /mcp prints the service's error plainly when this build has no MCP.
func TestMCPUnavailable(t *testing.T) {
	e := newEnv(t)
	s := e.run(true, nil)
	s.send("/mcp")
	s.out.waitFor(t, "kin: MCP support is not available in this build\n")
	s.send("/quit")
	s.wait()
}
