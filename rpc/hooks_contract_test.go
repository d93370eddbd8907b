package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// These tests hold kin to Claude Code's hook contract end to end: the
// person's hooks (in $KIN_HOME/settings.json, scripts in $KIN_HOME/hooks)
// run by a real server, confined as commands are, against the scripted
// model; what a hook answered is judged by what the model was sent next,
// what the editor was told, and what ran.

// hookScript writes an executable script into $KIN_HOME/hooks (readable
// to a confined hook) and returns the command that runs it.
func (e *env) hookScript(name, text string) string {
	e.t.Helper()
	dir := filepath.Join(e.Home, "hooks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return "sh " + p
}

// noticeWith waits for a hooks notice whose message contains text.
func noticeWith(ed *rpctest.Editor, text string) map[string]any {
	return ed.Wait("notice", rpctest.All(rpctest.Field("source", "hooks"), func(m map[string]any) bool {
		return strings.Contains(fmt.Sprint(m["message"]), text)
	}))
}

// A Stop hook that blocks sends the model back to work with its reason
// (JSON decision "block" the first time, exit 2 after), with
// stop_hook_active telling the hook it already did; after 3 times in a
// turn kin stops asking it and the turn completes.
func TestStopHookSendsTheModelBackAtMostThreeTimes(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.WS, "stops.log")
	stop := e.hookScript("stop.sh", `#!/bin/sh
active=$(jq -c .stop_hook_active)
echo "$active" >> "$CLAUDE_PROJECT_DIR/stops.log"
n=$(wc -l < "$CLAUDE_PROJECT_DIR/stops.log" | tr -d ' ')
if [ "$n" = 1 ]; then
  echo '{"decision":"block","reason":"run the tests first (1)"}'
  exit 0
fi
echo "not done: run the linter too ($n)" >&2
exit 2
`)
	e.settings(hooksJSON("Stop", "", stop, 0))
	ed, sid := e.editor()
	e.Model.Script(
		modeltest.Reply{Text: []string{"done 1"}},
		modeltest.Reply{Text: []string{"done 2"}},
		modeltest.Reply{Text: []string{"done 3"}},
		modeltest.Reply{Text: []string{"done 4"}},
		modeltest.Reply{Text: []string{"done 5 (never asked for)"}},
	)
	if done := completed(ed, start(t, ed, sid, "fix it")); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	reqs := e.Model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4: the first answer and 3 times sent back", len(reqs))
	}
	if strings.Contains(reqs[0].Instructions, "not to stop yet") {
		t.Errorf("the first request already carries a Stop hook's reason")
	}
	for i, want := range []string{"run the tests first (1)", "run the linter too (2)", "run the linter too (3)"} {
		if r := reqs[i+1].Instructions; !strings.Contains(r, "A hook asked you not to stop yet: ") || !strings.Contains(r, want) {
			t.Errorf("request %d does not give the model the hook's reason %q:\n%s", i+1, want, r)
		}
	}
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "false\ntrue\ntrue\n" {
		t.Errorf("the Stop hook ran with stop_hook_active %q, want false, true, true (and not a 4th time)", got)
	}
}

// PreToolUse's JSON answers: decision "block" and permissionDecision
// "deny" stop the call and the model reads the reason; "ask" makes kin ask
// the person about a call that runs unasked; systemMessage reaches the
// person as a notice.
func TestPreToolUseJSONBlocksDeniesAsksAndTellsThePerson(t *testing.T) {
	e := newEnv(t)
	e.put("notes.txt", "NOTES-CONTENT\n")
	pre := e.hookScript("pre.sh", `#!/bin/sh
tool=$(jq -r .tool_name)
case "$tool" in
Bash) echo '{"decision":"block","reason":"no shell today: BLOCK-REASON"}' ;;
Read) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"secrets live there: DENY-REASON"}}' ;;
LS) echo '{"systemMessage":"listing the folder: SYSTEM-MESSAGE","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"the person wants to see listings: ASK-REASON"}}' ;;
esac
exit 0
`)
	e.settings(hooksJSON("PreToolUse", "*", pre, 0))
	ed, sid := e.editor()
	var asked []map[string]any
	answerApprovals(ed, func(req map[string]any) string {
		asked = append(asked, req)
		return "allow_once"
	})
	marker := filepath.Join(e.WS, "bash-ran")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch " + marker})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c3", Name: "list_dir", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	if done := completed(ed, start(t, ed, sid, "look around")); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	reqs := e.Model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if out, _ := reqs[1].LastToolOutput(); !strings.Contains(out, "A hook blocked this call") || !strings.Contains(out, "BLOCK-REASON") {
		t.Errorf("bash's result as the model read it: %q", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the blocked bash call ran")
	}
	if out, _ := reqs[2].LastToolOutput(); !strings.Contains(out, "A hook blocked this call") || !strings.Contains(out, "DENY-REASON") || strings.Contains(out, "NOTES-CONTENT") {
		t.Errorf("read_file's result as the model read it: %q", out)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "denied")))
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c2"), rpctest.Field("status", "denied")))
	// list_dir runs unasked without a hook; the hook's "ask" asked, once,
	// saying why, and the person's allow ran it
	if len(asked) != 1 || asked[0]["tool"] != "list_dir" || !strings.Contains(fmt.Sprint(asked[0]["warning"]), "ASK-REASON") {
		t.Fatalf("approvals asked: %v", asked)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c3"), rpctest.Field("status", "completed")))
	if out, _ := reqs[3].LastToolOutput(); !strings.Contains(out, "notes.txt") {
		t.Errorf("list_dir's result: %q", out)
	}
	noticeWith(ed, "SYSTEM-MESSAGE")
}

// PreToolUse's continue:false ends the turn: the call does not run, no
// further request goes to the model, and the turn says why.
func TestPreToolUseContinueFalseEndsTheTurn(t *testing.T) {
	e := newEnv(t)
	pre := e.hookScript("halt.sh", `#!/bin/sh
echo '{"continue":false,"stopReason":"the build is broken: HALT-REASON"}'
`)
	e.settings(hooksJSON("PreToolUse", "Bash", pre, 0))
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	marker := filepath.Join(e.WS, "bash-ran")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch " + marker})}}},
		modeltest.Reply{Text: []string{"never asked for"}},
	)
	done := completed(ed, start(t, ed, sid, "build"))
	if done["status"] != "cancelled" || !strings.Contains(fmt.Sprint(done["error"]), "HALT-REASON") {
		t.Fatalf("turn %v", done)
	}
	if n := len(e.Model.Requests()); n != 1 {
		t.Errorf("%d model requests after a hook stopped the turn, want 1", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the call ran although a hook stopped the turn before it")
	}
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "denied")))
	if !strings.Contains(fmt.Sprint(call["output"]), "HALT-REASON") {
		t.Errorf("the stopped call's output: %v", call["output"])
	}
	noticeWith(ed, "stopped the turn: the build is broken")
}

// PostToolUse: additionalContext reaches the model's next request;
// decision "block" adds its reason to the result the model reads (the call
// already ran); continue:false ends the turn after the call.
func TestPostToolUseAddsContextBlocksAndStops(t *testing.T) {
	e := newEnv(t)
	e.put("a.txt", "A-CONTENT\n")
	e.put("b.txt", "B-CONTENT\n")
	e.put("c.txt", "C-CONTENT\n")
	post := e.hookScript("post.sh", `#!/bin/sh
in=$(cat)
path=$(printf '%s' "$in" | jq -r .tool_input.path)
case "$path" in
a.txt) printf '%s' "$in" | jq -c '{hookSpecificOutput: {hookEventName: "PostToolUse", additionalContext: ("POST-CONTEXT saw " + .tool_response.output)}}' ;;
b.txt) echo '{"decision":"block","reason":"b.txt is generated: POST-BLOCK"}' ;;
c.txt) echo '{"continue":false,"stopReason":"enough reading: POST-HALT"}' ;;
esac
`)
	e.settings(hooksJSON("PostToolUse", "Read", post, 0))
	ed, sid := e.editor()
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "read_file", Arguments: `{"path":"b.txt"}`}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c3", Name: "read_file", Arguments: `{"path":"c.txt"}`}}},
		modeltest.Reply{Text: []string{"never asked for"}},
	)
	done := completed(ed, start(t, ed, sid, "read"))
	reqs := e.Model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3 (the hook stopped the turn after c.txt was read)", len(reqs))
	}
	if done["status"] != "cancelled" || !strings.Contains(fmt.Sprint(done["error"]), "POST-HALT") {
		t.Fatalf("turn %v", done)
	}
	if strings.Contains(reqs[0].Instructions, "POST-CONTEXT") {
		t.Errorf("context before the call ran")
	}
	if !strings.Contains(reqs[1].Instructions, "POST-CONTEXT saw") || !strings.Contains(reqs[1].Instructions, "A-CONTENT") {
		t.Errorf("the PostToolUse context (made from the call's response) did not reach the next request:\n%s", reqs[1].Instructions)
	}
	out, _ := reqs[2].LastToolOutput()
	if !strings.Contains(out, "B-CONTENT") || !strings.Contains(out, "[kin: a hook that runs after each call says: b.txt is generated: POST-BLOCK]") {
		t.Errorf("b.txt's result as the model read it: %q", out)
	}
	// c.txt was read (the hook ran after it) and its result recorded
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c3"), rpctest.Field("status", "completed")))
}

// A hook is confined as commands are: it writes in the workspace, but not
// outside it, and cannot read $KIN_HOME (beyond $KIN_HOME/hooks).
func TestAHookIsConfinedLikeCommands(t *testing.T) {
	e := confinedEnv(t)
	outside := t.TempDir()
	canary := filepath.Join(e.Home, "notes.txt")
	if err := os.WriteFile(canary, []byte("KIN-HOME-CANARY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	probe := e.hookScript("probe.sh", `#!/bin/sh
echo inside > "$CLAUDE_PROJECT_DIR/inside.txt" && echo wrote-inside
echo outside > "`+outside+`/outside.txt" && echo wrote-outside
cat "`+canary+`" 2>/dev/null
echo probe-done
`)
	e.settings(hooksJSON("UserPromptSubmit", "", probe, 0))
	ed, sid := e.editor()
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	if done := completed(ed, start(t, ed, sid, "hi")); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	instr := e.Model.Requests()[0].Instructions
	// the hook ran to its end, and its stdout is the model's context
	if !strings.Contains(instr, "probe-done") || !strings.Contains(instr, "wrote-inside") {
		t.Fatalf("the hook's output did not reach the model:\n%s", instr)
	}
	if b, err := os.ReadFile(filepath.Join(e.WS, "inside.txt")); err != nil || string(b) != "inside\n" {
		t.Errorf("the hook could not write in the workspace: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
		t.Errorf("a hook wrote outside the workspace")
	}
	if strings.Contains(instr, "KIN-HOME-CANARY") {
		t.Errorf("a hook read $KIN_HOME")
	}
}

// A Stop hook's continue:false wins over its own "block" (as in Claude
// Code): the model is not sent back, the turn ends.
func TestStopHookContinueFalseWinsOverBlock(t *testing.T) {
	e := newEnv(t)
	stop := e.hookScript("stop.sh", `#!/bin/sh
echo '{"continue":false,"stopReason":"out of time: STOP-HALT","decision":"block","reason":"keep going: STOP-BLOCK"}'
`)
	e.settings(hooksJSON("Stop", "", stop, 0))
	ed, sid := e.editor()
	e.Model.Script(modeltest.Reply{Text: []string{"done"}}, modeltest.Reply{Text: []string{"never asked for"}})
	completed(ed, start(t, ed, sid, "go"))
	if n := len(e.Model.Requests()); n != 1 {
		t.Fatalf("%d model requests: a Stop hook's continue:false sent the model back", n)
	}
	noticeWith(ed, "stopped the turn: out of time: STOP-HALT")
}
