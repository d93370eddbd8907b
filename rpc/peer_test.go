package rpc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// Tests of issue 15, "working like a peer": plans, modes, undo, the
// continue question and commands, through the fake editor and the mock
// model.

func plan(entries ...[2]string) string {
	var es []map[string]any
	for _, e := range entries {
		es = append(es, map[string]any{"content": e[0], "status": e[1]})
	}
	return args(map[string]any{"entries": es})
}

// newSessionWith makes a session with params (mode, …) on ed.
func newSessionWith(t *testing.T, ed *rpctest.Editor, params map[string]any) map[string]any {
	t.Helper()
	var res struct {
		Session map[string]any `json:"session"`
	}
	ed.MustCall("session/new", params, &res)
	return res.Session
}

func historyOf(t *testing.T, ed *rpctest.Editor, sid string) []map[string]any {
	t.Helper()
	var res struct {
		Session map[string]any   `json:"session"`
		History []map[string]any `json:"history"`
	}
	ed.MustCall("session/resume", map[string]any{"sessionId": sid}, &res)
	return res.History
}

func itemsOf(history []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, h := range history {
		if h["type"] == typ {
			out = append(out, h)
		}
	}
	return out
}

func toolNames(r modeltest.Request) map[string]bool {
	out := map[string]bool{}
	for _, tl := range r.Tools {
		out[tl["name"].(string)] = true
	}
	return out
}

func restart(t *testing.T, e *env, ed *rpctest.Editor) *rpctest.Editor {
	t.Helper()
	ed.MustCall("shutdown", nil, nil)
	ed.Notify("exit", nil)
	<-ed.Done
	ed2 := rpctest.Start(t, e.Options())
	ed2.Initialize(e.WS)
	return ed2
}

func TestPlanUpdatedTwiceAndReplayedOnResume(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p1", Name: "update_plan", Arguments: plan([2]string{"read the code", "in_progress"}, [2]string{"fix the bug", "pending"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "p2", Name: "update_plan", Arguments: plan([2]string{"read the code", "completed"}, [2]string{"fix the bug", "in_progress"})}}},
		modeltest.Reply{Text: []string{"working on it"}},
	)
	ed, sid := e.editor()
	tid := start(t, ed, sid, "fix it")
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	plans := ed.Notes("turn/plan")
	if len(plans) != 2 || len(ed.Notes("approval/request")) != 0 {
		t.Fatalf("turn/plan %v (approvals %v)", plans, ed.Notes("approval/request"))
	}
	second := plans[1]["entries"].([]any)
	if plans[1]["turnId"] != tid || len(second) != 2 || second[0].(map[string]any)["status"] != "completed" || second[1].(map[string]any)["status"] != "in_progress" {
		t.Errorf("second plan %v", plans[1])
	}
	if out, _ := e.Model.Requests()[1].LastToolOutput(); !strings.Contains(out, "Plan updated: 2 steps (1 in progress, 1 pending)") {
		t.Errorf("the model was told %q", out)
	}

	// After a restart, resume shows both plans where they happened, and
	// /plan the last one.
	ed2 := restart(t, e, ed)
	items := itemsOf(historyOf(t, ed2, sid), "plan")
	if len(items) != 2 || items[0]["callId"] != "p1" || items[1]["turnId"] != tid {
		t.Fatalf("plan items %v", items)
	}
	var res rpc.TurnStartResult
	ed2.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/plan"}, &res)
	if res.TurnID != "" || res.Command == nil || res.Command.Text != "Plan:\n  [x] read the code\n  [~] fix the bug" {
		t.Errorf("/plan = %+v", res.Command)
	}
}

func TestAskModeOffersNoWritingToolAndRefusesAForcedCall(t *testing.T) {
	e := newEnv(t)
	target := e.Write("a.txt", "one\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "b1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"I cannot change anything here."}},
	)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	s := newSessionWith(t, ed, map[string]any{"mode": "ask"})
	sid := s["sessionId"].(string)
	if s["mode"] != "ask" {
		t.Errorf("session %v", s)
	}
	tid := start(t, ed, sid, "change a.txt to two")
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	offered := toolNames(e.Model.Requests()[0])
	for _, name := range []string{"write_file", "edit_file", "bash"} {
		if offered[name] {
			t.Errorf("ask mode offered %s: %v", name, offered)
		}
	}
	for _, name := range []string{"read_file", "list_dir", "search", "update_plan", "ask"} {
		if !offered[name] {
			t.Errorf("ask mode did not offer %s: %v", name, offered)
		}
	}
	w := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "w1"), rpctest.Field("status", "denied")))
	// The refusal says why and how to allow it, for the model and every front end.
	if out := w["output"].(string); !strings.Contains(out, "ask mode") || !strings.Contains(out, "switches the mode to Agent") {
		t.Errorf("refusal %q", out)
	}
	// The person is told why in kin's words, the same for every front end.
	if w["reason"] != agent.RefusedAskMode {
		t.Errorf("the refusal's reason %q", w["reason"])
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "denied")))
	if n := ed.Notes("approval/request"); len(n) != 0 {
		t.Errorf("ask mode asked: %v", n)
	}
	if b, _ := os.ReadFile(target); string(b) != "one\n" {
		t.Errorf("a.txt is %q", b)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "made")); err == nil {
		t.Error("a command ran in ask mode")
	}
	// The refusals are on record as the mode's decisions.
	var modeDecisions int
	for _, d := range itemsOf(historyOf(t, ed, sid), "decision") {
		if d["reason"] == "mode" && d["decision"] == "deny" {
			modeDecisions++
		}
	}
	if modeDecisions != 2 {
		t.Errorf("%d decisions by the mode", modeDecisions)
	}
}

func TestAutoEditAppliesAnEditWithoutApprovalButAsksForEnvAndBash(t *testing.T) {
	e := newEnv(t)
	target := e.Write("a.txt", "one\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "two\n"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w2", Name: "write_file", Arguments: args(map[string]any{"path": ".env", "content": "TOKEN=x\n"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "b1", Name: "bash", Arguments: args(map[string]any{"command": "touch made"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid := e.editor()
	var conf rpc.SessionConfigureResult
	ed.MustCall("session/configure", map[string]any{"sessionId": sid, "mode": "auto-edit"}, &conf)
	if conf.Mode != "auto-edit" {
		t.Fatalf("configure %+v", conf)
	}
	answerApprovals(ed, func(map[string]any) string { return "deny" })
	tid := start(t, ed, sid, "edit things")
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	done := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "w1"), rpctest.Field("status", "completed")))
	if c, _ := done["content"].([]any); len(c) != 1 || c[0].(map[string]any)["type"] != "diff" {
		t.Errorf("the applied edit is not shown with its diff: %v", done)
	}
	if b, _ := os.ReadFile(target); string(b) != "two\n" {
		t.Errorf("a.txt is %q", b)
	}
	asked := map[string]bool{}
	for _, r := range ed.Notes("approval/request") {
		asked[r["callId"].(string)] = true
	}
	if asked["w1"] || !asked["w2"] || !asked["b1"] {
		t.Errorf("asked for %v; want w2 (.env) and b1 (bash) only", asked)
	}
	if _, err := os.Stat(filepath.Join(e.WS, ".env")); err == nil {
		t.Error(".env was written")
	}
	// The mode survives a restart.
	ed2 := restart(t, e, ed)
	var res struct {
		Session map[string]any   `json:"session"`
		History []map[string]any `json:"history"`
	}
	ed2.MustCall("session/resume", map[string]any{"sessionId": sid}, &res)
	if res.Session["mode"] != "auto-edit" || len(itemsOf(res.History, "mode")) != 1 {
		t.Errorf("resumed %v / %v", res.Session, itemsOf(res.History, "mode"))
	}
	for _, d := range itemsOf(res.History, "decision") {
		if d["callId"] == "w1" && d["reason"] != "mode" {
			t.Errorf("the edit's decision %v", d)
		}
	}
	if code, msg := ed2.CallErr("session/configure", map[string]any{"sessionId": sid, "mode": "yolo"}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "yolo") {
		t.Errorf("bad mode: %d %s", code, msg)
	}
}

// With autoApproveSandboxedCommands, auto-edit runs a confined command
// without network unasked, and still asks for one with network.
func TestAutoEditRunsContainedCommandsWhenTheSettingSaysSo(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"autoApproveSandboxedCommands":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Sandbox = sandbox.New(sandbox.FromSettings(e.Home))
	if st := e.Sandbox.Status(); !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("KIN_REQUIRE_BWRAP=1 but commands cannot be confined: %s", st.Reason)
		}
		t.Skipf("no sandbox here: %s", st.Reason)
	}
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "b1", Name: "bash", Arguments: args(map[string]any{"command": "echo contained"})}}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "b2", Name: "bash", Arguments: args(map[string]any{"command": "echo online", "network": true})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed := rpctest.Start(t, e.Options())
	ed.Initialize(e.WS)
	sid := newSessionWith(t, ed, map[string]any{"mode": "auto-edit"})["sessionId"].(string)
	answerApprovals(ed, func(map[string]any) string { return "deny" })
	completed(ed, start(t, ed, sid, "run"))
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "completed")))
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b2"), rpctest.Field("status", "denied")))
	for _, r := range ed.Notes("approval/request") {
		if r["callId"] == "b1" {
			t.Errorf("a contained command was asked about: %v", r)
		}
	}
}

func TestUndoRestoresTwoFilesAndReportsAThirdEditedSince(t *testing.T) {
	e := newEnv(t)
	a, b, c := e.Write("a.txt", "a1\n"), e.Write("b.txt", "b1\n"), e.Write("c.txt", "c1\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "e1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "a2\n"})},
			{ID: "e2", Name: "edit_file", Arguments: args(map[string]any{"path": "b.txt", "old_string": "b1", "new_string": "b2"})},
			{ID: "e3", Name: "write_file", Arguments: args(map[string]any{"path": "c.txt", "content": "c2\n"})},
			{ID: "e4", Name: "write_file", Arguments: args(map[string]any{"path": "new.txt", "content": "fresh\n"})},
			{ID: "x1", Name: "bash", Arguments: args(map[string]any{"command": "true"})},
		}},
		modeltest.Reply{Text: []string{"changed"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, "change them")
	completed(ed, tid)
	if err := os.WriteFile(c, []byte("c2\nmine\n"), 0o644); err != nil { // the person edits c.txt since
		t.Fatal(err)
	}

	var u rpc.TurnUndoResult
	ed.MustCall("turn/undo", map[string]any{"sessionId": sid}, &u)
	created := filepath.Join(e.WS, "new.txt")
	if u.TurnID != tid || strings.Join(u.Restored, ",") != a+","+b+","+created {
		t.Errorf("undo %+v", u)
	}
	if u.Question != "change them" { // the turn is named by its question, for a person
		t.Errorf("undo names the turn %q", u.Question)
	}
	if len(u.Conflicts) != 1 || u.Conflicts[0].Path != c || !strings.Contains(u.Conflicts[0].Diff, "+mine") {
		t.Errorf("conflicts %+v", u.Conflicts)
	}
	if len(u.NotUndoable) != 1 || u.NotUndoable[0].CallID != "x1" || u.NotUndoable[0].Name != "bash" {
		t.Errorf("not undoable %+v", u.NotUndoable)
	}
	for p, want := range map[string]string{a: "a1\n", b: "b1\n", c: "c2\nmine\n"} {
		if got, _ := os.ReadFile(p); string(got) != want {
			t.Errorf("%s is %q, want %q", filepath.Base(p), got, want)
		}
	}
	if _, err := os.Stat(created); err == nil {
		t.Error("the file the turn created is still there")
	}
	ed.Wait("workspace/didChangeFiles", func(m map[string]any) bool { return strings.Contains(mustJSON(m), `"deleted"`) })
	undos := itemsOf(historyOf(t, ed, sid), "undo")
	if len(undos) != 1 || undos[0]["undo"].(map[string]any)["turnId"] != tid {
		t.Errorf("undo items %v", undos)
	}
	// Nothing is left to undo.
	if code, _ := ed.CallErr("turn/undo", map[string]any{"sessionId": sid}); code != rpc.CodeNotFound {
		t.Errorf("second undo: code %d", code)
	}
	// The checkpoints go with their session.
	kept := filepath.Join(e.Home, "checkpoints", sid)
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("no checkpoints kept: %v", err)
	}
	ed.MustCall("session/delete", map[string]any{"sessionId": sid}, nil)
	if _, err := os.Stat(kept); !os.IsNotExist(err) {
		t.Errorf("the deleted session's checkpoints remain: %v", err)
	}
}

func TestUndoAfterARestartAndThroughTheCommand(t *testing.T) {
	e := newEnv(t)
	p := e.Write("a.txt", "before\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "e1", Name: "write_file", Arguments: args(map[string]any{"path": "a.txt", "content": "after\n"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid := e.editor()
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, "change a.txt")
	completed(ed, tid)
	ed2 := restart(t, e, ed)
	var res rpc.TurnStartResult
	ed2.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/undo"}, &res)
	if res.Command == nil || res.TurnID != "" || !strings.Contains(res.Command.Text, "restored "+p) {
		t.Fatalf("/undo = %+v", res.Command)
	}
	var u rpc.TurnUndoResult
	b, _ := json.Marshal(res.Command.Result)
	if err := json.Unmarshal(b, &u); err != nil || u.TurnID != tid {
		t.Errorf("/undo result %s", b)
	}
	if got, _ := os.ReadFile(p); string(got) != "before\n" {
		t.Errorf("a.txt is %q", got)
	}
	// The model hears of it with the next question.
	e.Model.Script(modeltest.Reply{Text: []string{"ok"}})
	completed(ed2, start(t, ed2, sid, "what now?"))
	reqs := e.Model.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Raw), "the person undid the file changes of turn "+tid) {
		t.Errorf("the model was not told of the undo: %s", last.Raw)
	}
}

func TestContinueQuestionAllowedAndDenied(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(`{"maxToolCallsPerTurn":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(id string) modeltest.Reply {
		return modeltest.Reply{Calls: []modeltest.Call{{ID: id, Name: "list_dir", Arguments: "{}"}}}
	}
	e.Model.Script(call("a1"), call("a2"), call("a3"), modeltest.Reply{Text: []string{"done"}},
		call("d1"), call("d2"), call("d3"))
	ed, sid := e.editor()
	var decision atomic.Value
	decision.Store("allow_once")
	answerApprovals(ed, func(req map[string]any) string {
		if req["kind"] != "continue" {
			return "deny"
		}
		return decision.Load().(string)
	})
	if done := completed(ed, start(t, ed, sid, "go on")); done["status"] != "completed" {
		t.Fatalf("allowed: %v", done)
	}
	req := ed.Wait("approval/request", rpctest.Field("kind", "continue"))
	if req["title"] != "kin has made 2 tool calls in this turn. Continue for 2 more?" {
		t.Errorf("question %v", req)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "a3"), rpctest.Field("status", "completed")))

	decision.Store("deny")
	tid := start(t, ed, sid, "again")
	done := completed(ed, tid)
	if done["status"] != "limit" || !strings.Contains(done["error"].(string), "2 tool calls") {
		t.Fatalf("denied: %v", done)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "d3"), rpctest.Field("status", "failed")))
	var continues int
	for _, d := range itemsOf(historyOf(t, ed, sid), "decision") {
		if d["approvalKind"] == "continue" {
			continues++
		}
	}
	if continues != 2 {
		t.Errorf("%d continue decisions on record", continues)
	}
}

func TestCommandsListAndUnknownCommands(t *testing.T) {
	e := newEnv(t)
	ed, sid := e.editor()
	var res rpc.CommandsListResult
	ed.MustCall("commands/list", map[string]any{"sessionId": sid}, &res)
	var names []string
	for _, c := range res.Commands {
		names = append(names, c.Name)
		if c.Source != "kin" || c.Description == "" {
			t.Errorf("command %+v", c)
		}
	}
	if strings.Join(names, " ") != "compact undo plan review mode model grants mcp skills trust" {
		t.Errorf("commands %v", names)
	}
	code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/frobnicate now"})
	if code != rpc.CodeInvalidParams || !strings.Contains(msg, "/frobnicate") {
		t.Errorf("unknown command: %d %s", code, msg)
	}
	var mode rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/mode ask"}, &mode)
	if mode.Command == nil || !strings.HasPrefix(mode.Command.Text, "Mode: ask.") {
		t.Errorf("/mode ask = %+v", mode.Command)
	}
	var grants rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/grants"}, &grants)
	if grants.Command == nil || grants.Command.Text != "No standing grants." {
		t.Errorf("/grants = %+v", grants.Command)
	}
	// A question that starts with a slash, escaped.
	e.Model.Script(modeltest.Reply{Text: []string{"it is full"}})
	completed(ed, start(t, ed, sid, "//tmp is full?"))
	if got := e.Model.Requests()[0].LastUserText(); got != "/tmp is full?" {
		t.Errorf("the model was asked %q", got)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Undo writes the way the tools do: a file open in an editor that applies
// edits is put back in its buffer (workspace/applyEdit), unsaved text
// included, and the disk is left to the editor.
func TestUndoGoesThroughTheEditorsBuffer(t *testing.T) {
	e := newEnv(t)
	p := e.Write("a.txt", "a\nb\n")
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "b\n", "new_string": "B\n"})}}},
		modeltest.Reply{Text: []string{"done"}},
	)
	ed, sid, _ := e.bufferEditor(rpctest.Capabilities(true), rpctest.ApplyEdits, nil)
	ed.OpenBuffer(p, "a\nb\nunsaved\n")
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	completed(ed, start(t, ed, sid, "capitalise b"))
	if text, _ := ed.Buffer(p); text != "a\nB\nunsaved\n" {
		t.Fatalf("buffer after the edit %q", text)
	}
	var u rpc.TurnUndoResult
	ed.MustCall("turn/undo", map[string]any{"sessionId": sid}, &u)
	if len(u.Restored) != 1 || u.Restored[0] != p || len(u.Conflicts) != 0 {
		t.Fatalf("undo %+v", u)
	}
	if text, _ := ed.Buffer(p); text != "a\nb\nunsaved\n" {
		t.Errorf("buffer after undo %q", text)
	}
	if reqs := ed.Requests(rpc.MethodApplyEdit); len(reqs) != 2 {
		t.Errorf("%d edits sent, want the tool's and undo's", len(reqs))
	}
	if got := e.read("a.txt"); got != "a\nb\n" {
		t.Errorf("the disk changed: %q", got)
	}
}
