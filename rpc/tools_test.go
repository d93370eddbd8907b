package rpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestToolCallApprovedRunsAndDeniedDoesNot(t *testing.T) {
	e := newEnv(t)
	target := e.Write("notes.txt", "old\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_run", Name: "bash", Arguments: args(map[string]any{"command": "echo ran-ok"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_write", Name: "write_file", Arguments: args(map[string]any{"path": "notes.txt", "content": "new\n"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(req map[string]any) string {
		if req["tool"] == "bash" {
			return "allow_once"
		}
		return "deny"
	})
	tid := start(t, ed, sid, "run and write")
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn: %v", done)
	}
	run := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_run"), rpctest.Field("status", "completed")))
	if !strings.Contains(run["output"].(string), "ran-ok") {
		t.Errorf("bash output %q", run["output"])
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_write"), rpctest.Field("status", "denied")))
	if b, _ := os.ReadFile(target); string(b) != "old\n" {
		t.Errorf("a denied write changed the file: %q", b)
	}
	// The approval for the write carried the full diff, and each request
	// was resolved exactly once.
	req := ed.Wait("approval/request", rpctest.Field("callId", "call_write"))
	diffs := req["diffs"].([]any)
	if u := diffs[0].(map[string]any)["unified"].(string); !strings.Contains(u, "-old") || !strings.Contains(u, "+new") {
		t.Errorf("diff %q", u)
	}
	for _, r := range ed.Notes("approval/request") {
		n := 0
		for _, res := range ed.Notes("approval/resolved") {
			if res["requestId"] == r["requestId"] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%v resolved %d times", r["requestId"], n)
		}
	}
	// The model was told the outcome of both calls.
	reqs := e.Model.Requests()
	if out, _ := reqs[1].LastToolOutput(); !strings.Contains(out, "ran-ok") {
		t.Errorf("model got %q for bash", out)
	}
	if out, _ := reqs[2].LastToolOutput(); !strings.Contains(out, "denied") {
		t.Errorf("model got %q for the denied write", out)
	}
}

func TestApprovedEditAppliesTheDiffShown(t *testing.T) {
	e := newEnv(t)
	p := e.Write("main.go", "package main\n\nfunc main() {}\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: args(map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { run() }"})}}},
		modeltest.Reply{Text: []string{"edited"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, "edit")
	completed(ed, tid)
	req := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
	d := req["diffs"].([]any)[0].(map[string]any)
	b, _ := os.ReadFile(p)
	if string(b) != d["newText"] {
		t.Errorf("file is %q, approval showed %q", b, d["newText"])
	}
}

func TestCancelDeniesPendingApproval(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "do it")
	req := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	res := ed.Wait("approval/resolved", rpctest.Field("requestId", req["requestId"]))
	if res["decision"] != "deny" || res["reason"] != "cancelled" {
		t.Errorf("resolved %v", res)
	}
	if done := completed(ed, tid); done["status"] != "cancelled" {
		t.Errorf("turn %v", done)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("the command ran without approval")
	}
	// Answering late is an error, not a run.
	if code, _ := ed.CallErr("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: "allow_once"}); code != rpc.CodeNotFound {
		t.Errorf("late respond code %d", code)
	}
}

func TestAllowAlwaysIsScopedToProgramAndSubcommand(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "go test ./..."})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c2", Name: "bash", Arguments: args(map[string]any{"command": "go test -run X ./..."})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c3", Name: "bash", Arguments: args(map[string]any{"command": "rm -f nothing"})}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(req map[string]any) string {
		if req["callId"] == "c1" {
			return "allow_always"
		}
		return "deny"
	})
	tid := start(t, ed, sid, "go")
	completed(ed, tid)
	// go test fails in an empty folder: what matters is that it ran.
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c2"), func(m map[string]any) bool {
		return m["status"] == "completed" || m["status"] == "failed"
	}))
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c3"), rpctest.Field("status", "denied")))
	asked := map[string]bool{}
	for _, r := range ed.Notes("approval/request") {
		asked[r["callId"].(string)] = true
	}
	if !asked["c1"] || asked["c2"] || !asked["c3"] {
		t.Errorf("asked for %v; want c1 and c3 only", asked)
	}
	var grants struct {
		Grants []map[string]any `json:"grants"`
	}
	ed.MustCall("grants/list", nil, &grants)
	if len(grants.Grants) != 1 || grants.Grants[0]["key"] != "bash:go test" {
		t.Fatalf("grants %v", grants.Grants)
	}
	ed.MustCall("grants/revoke", map[string]any{"id": grants.Grants[0]["id"]}, nil)
	ed.MustCall("grants/list", nil, &grants)
	if len(grants.Grants) != 0 {
		t.Errorf("after revoke: %v", grants.Grants)
	}
}

func TestTurnLimitAfterSixteenCalls(t *testing.T) {
	e := newEnv(t)
	var replies []modeltest.Reply
	for i := 0; i < 17; i++ {
		replies = append(replies, modeltest.Reply{Calls: []modeltest.Call{{ID: fmt.Sprintf("c%d", i), Name: "list_dir", Arguments: "{}"}}})
	}
	e.Model.Script(replies...)
	ed, sid := e.editor()
	// At the limit kin asks whether to go on: no.
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] == "continue" {
			return "deny"
		}
		return ""
	})
	tid := start(t, ed, sid, "loop")
	done := completed(ed, tid)
	if done["status"] != "limit" {
		t.Fatalf("status %v", done)
	}
	if ran := ed.Count("turn/toolCall", rpctest.Field("status", "completed")); ran != 16 {
		t.Errorf("%d calls ran, want 16", ran)
	}
}

func TestResumeAfterRestartReplaysHistoryAndContinues(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: args(map[string]any{"path": "a.txt"})}}},
		modeltest.Reply{Text: []string{"it says hi"}},
	)
	e.Write("a.txt", "hi\n")
	ed, sid := e.editor()
	completed(ed, start(t, ed, sid, "what is in a.txt?"))
	ed.MustCall("shutdown", nil, nil)
	ed.Notify("exit", nil)
	<-ed.Done

	// A new process: the session is listed, resumes with its tool call, and
	// the next question carries the whole conversation.
	ed2 := rpctest.Start(t, e.Options())
	ed2.Initialize(e.WS)
	var list rpc.SessionListResult
	ed2.MustCall("session/list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Title != "what is in a.txt?" || list.Sessions[0].Turns != 1 {
		t.Fatalf("list %+v", list.Sessions)
	}
	var res rpc.SessionResumeResult
	ed2.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	var types []string
	for _, h := range res.History {
		types = append(types, h.Type)
		if h.Type == "toolCall" && (h.Status != "completed" || !strings.Contains(h.Output, "hi")) {
			t.Errorf("tool call in history: %+v", h)
		}
	}
	if got := strings.Join(types, ","); got != "user,toolCall,assistant,turn" {
		t.Errorf("history types %s", got)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"still here"}})
	completed(ed2, start(t, ed2, sid, "and now?"))
	last := e.Model.Requests()[2]
	if len(last.Input) != 5 { // user, call, output, assistant, user
		t.Errorf("continued conversation has %d items: %v", len(last.Input), last.Input)
	}
}

func TestSessionWithVanishedToolAndCutLastLineStillOpens(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.Home, "sessions")
	os.MkdirAll(dir, 0o700)
	log := `{"type":"session","time":"2026-11-01T10:00:00Z","sessionId":"s_old","title":"old"}
{"type":"user","time":"2026-11-01T10:00:01Z","turnId":"t_1","text":"use the docs"}
{"type":"toolCall","time":"2026-11-01T10:00:02Z","turnId":"t_1","callId":"c9","name":"mcp__gone__query","arguments":"{}"}
{"type":"toolResult","time":"2026-11-01T10:00:03Z","turnId":"t_1","callId":"c9","name":"mcp__gone__query","status":"completed","output":"docs"}
{"type":"turn","time":"2026-11-01T10:00:04Z","turnId":"t_1","status":"completed"}
{"type":"assistant","time":"2026-11-01T10:00:05Z","tu`
	os.WriteFile(filepath.Join(dir, "s_old.jsonl"), []byte(log), 0o600)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: "s_old"}, &res)
	if len(res.History) != 3 || res.History[1].Name != "mcp__gone__query" {
		t.Fatalf("history %+v", res.History)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	if done := completed(ed, start(t, ed, "s_old", "go on")); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	recs, _ := os.ReadFile(filepath.Join(dir, "s_old.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(recs)), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], `{"type":"turn"`) {
		t.Errorf("new records did not start on a fresh line: %q", lines[len(lines)-1])
	}
}

// A command kin killed (here at its timeout) is not an unknown outcome:
// kin knows it started, was killed and what it printed. It ends failed, the
// model is told exactly that, and the next question goes without an
// acknowledgement (an unknown outcome is acknowledged: see
// TestMCPInterruptedCallIsUnknownAndNeedsAcknowledgement).
func TestACommandKinKilledNeedsNoAcknowledgement(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "slow", Name: "bash", Arguments: args(map[string]any{"command": "echo begun; sleep 30", "timeout": 1})}}},
		modeltest.Reply{Text: []string{"timed out"}},
		modeltest.Reply{Text: []string{"answered"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	completed(ed, start(t, ed, sid, "run slow"))
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "slow"), rpctest.Field("status", "failed")))
	if out := call["output"].(string); !strings.Contains(out, "begun") || !strings.Contains(out, "killed by kin after the timeout") {
		t.Errorf("the killed command's output: %q", out)
	}
	if told, _ := e.Model.Requests()[1].LastToolOutput(); !strings.Contains(told, "it had started") {
		t.Errorf("the model was told %q", told)
	}
	t2 := start(t, ed, sid, "next question")
	if done := completed(ed, t2); done["status"] != "completed" || ed.Text(t2) != "answered" {
		t.Errorf("the next question: %v", done)
	}
	for _, r := range ed.Notes("approval/request") {
		if r["turnId"] == t2 {
			t.Errorf("asked before the next question: %v", r)
		}
	}
}

func TestEditorDisconnectDeniesPendingAndStops(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}})
	ed, sid := e.editor()
	start(t, ed, sid, "do it")
	ed.Wait("approval/request", nil)
	ed.Conn.Close()
	<-ed.Done
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("ran after disconnect")
	}
	recs, _ := os.ReadFile(filepath.Join(e.Home, "sessions", sid+".jsonl"))
	if !strings.Contains(string(recs), `"reason":"disconnected"`) || !strings.Contains(string(recs), `"status":"cancelled"`) {
		t.Errorf("log does not record the disconnect:\n%s", recs)
	}
}

func TestCancelKillsBashChildren(t *testing.T) {
	e := newEnv(t)
	// a unique sleep, found by its command line: inside the sandbox the
	// command sees other pids than the host does
	token := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "sleep " + token + " & echo started; wait"})}}})
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, "sleep")
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), func(m map[string]any) bool {
		return strings.Contains(fmt.Sprint(m["outputDelta"]), "started")
	}))
	pids := sleeping(t, token)
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	if done := completed(ed, tid); done["status"] != "cancelled" {
		t.Fatalf("%v", done)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c1"), rpctest.Field("status", "failed")))
	gone(t, token, pids)
}

// sleeping returns the pid of the one "sleep <token>" running, once it
// runs (the command's start is not the editor's to see). The bounds
// guard against a hang only: on a loaded machine the fork's exec, or the
// group's end after KillGrace, can take seconds.
func sleeping(t *testing.T, token string) []int {
	t.Helper()
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); len(pids) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		pids = running("sleep\x00" + token)
	}
	if len(pids) != 1 {
		t.Fatalf("the sleep child is not running: %v", pids)
	}
	return pids
}

// gone returns once no "sleep <token>" runs, and fails when one still
// does after 30 s.
func gone(t *testing.T, token string, pids []int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(running("sleep\x00"+token)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sleep child %v survived the cancel", pids)
		}
	}
}

// running lists the live (not zombie) processes whose command line holds
// token.
func running(token string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), token) {
			continue
		}
		if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); strings.Contains(string(st), ") Z ") {
			continue
		}
		out = append(out, pid)
	}
	return out
}

func TestResumeListsPendingApprovalsForAReloadedEditor(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: args(map[string]any{"command": "echo hi"})}}}, modeltest.Reply{Text: []string{"ok"}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, "run")
	req := ed.Wait("approval/request", rpctest.Field("callId", "c1"))
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if len(res.Pending) != 1 || res.Pending[0].Approval == nil || res.Pending[0].Approval.RequestID != req["requestId"] {
		t.Fatalf("pending %v", res.Pending)
	}
	ed.MustCall("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: "allow_once"}, nil)
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Errorf("%v", done)
	}
}
