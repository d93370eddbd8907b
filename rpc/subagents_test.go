package rpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// delegateCall is the model asking for a subagent.
func delegateCall(id, task, mode string) modeltest.Call {
	args := map[string]string{"task": task}
	if mode != "" {
		args["mode"] = mode
	}
	b, _ := json.Marshal(args)
	return modeltest.Call{ID: id, Name: "delegate", Arguments: string(b)}
}

// requestsOf are the model requests of the conversation that began with
// question.
func requestsOf(m *modeltest.Server, question string) []modeltest.Request {
	var out []modeltest.Request
	for _, r := range m.Requests() {
		if strings.Contains(r.FirstUserText(), question) {
			out = append(out, r)
		}
	}
	return out
}

func nested(parentSession, parentCall string) func(map[string]any) bool {
	return rpctest.All(rpctest.Field("parentSessionId", parentSession), rpctest.Field("parentCallId", parentCall))
}

func TestSubagentReadsFilesAndReturnsSummaryWhileParentStreams(t *testing.T) {
	e := newEnv(t)
	e.Write("a.go", "package app\n\n// A adds.\nfunc A(x, y int) int { return x + y }\n")
	e.Write("b.go", "package app\n\n// B doubles.\nfunc B(x int) int { return 2 * x }\n")
	const question, task = "what do the files of this package do?", "Summarise what a.go and b.go do, one line each."
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Text: []string{"Reading ", "both."}, Calls: []modeltest.Call{
			{ID: "c_read_a", Name: "read_file", Arguments: `{"path":"a.go"}`},
			{ID: "c_read_b", Name: "read_file", Arguments: `{"path":"b.go"}`}}, Usage: modeltest.Usage{Input: 300, Output: 20}},
		modeltest.Reply{Text: []string{"a.go: A adds two ints.\n", "b.go: B doubles an int."}, Usage: modeltest.Usage{Input: 500, Output: 30}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Text: []string{"Let me ask ", "a subagent."}, Calls: []modeltest.Call{delegateCall("call_d1", task, "")}, Usage: modeltest.Usage{Input: 100, Output: 10}},
		modeltest.Reply{Text: []string{"Both are ", "tiny helpers."}, Usage: modeltest.Usage{Input: 200, Output: 8}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, question)
	done := completed(ed, tid)
	if done["status"] != "completed" {
		t.Fatalf("parent turn: %v", done)
	}

	// The parent streamed around its delegate call.
	if got := ed.Text(tid); got != "Let me ask a subagent.Both are tiny helpers." {
		t.Errorf("parent's text = %q", got)
	}
	// The subagent's turn ran in a session of its own, nested under the
	// call: started, its reads, its answer, its end.
	started := ed.Wait("turn/started", nested(sid, "call_d1"))
	child, ctid := started["sessionId"].(string), started["turnId"].(string)
	if child == "" || child == sid || started["parentTurnId"] != tid || started["input"] != task {
		t.Fatalf("subagent's turn/started: %v", started)
	}
	for _, call := range []string{"c_read_a", "c_read_b"} {
		ed.Wait("turn/toolCall", rpctest.All(nested(sid, "call_d1"), rpctest.Field("sessionId", child), rpctest.Field("callId", call), rpctest.Field("status", "completed")))
	}
	if got := ed.Text(ctid); got != "Reading both.a.go: A adds two ints.\nb.go: B doubles an int." {
		t.Errorf("subagent's text = %q", got)
	}
	for _, d := range ed.Notes("turn/delta") {
		if d["turnId"] == ctid && (d["parentSessionId"] != sid || d["parentCallId"] != "call_d1") {
			t.Errorf("a subagent's delta without its parent: %v", d)
		}
	}
	cdone := ed.Wait("turn/completed", rpctest.Field("turnId", ctid))
	if cdone["status"] != "completed" || cdone["parentSessionId"] != sid {
		t.Errorf("subagent's turn/completed: %v", cdone)
	}
	// The delegate call: a session and mode from the start, the answer as
	// its output.
	running := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d1"), rpctest.Field("status", "running"),
		func(m map[string]any) bool { return m["subagent"] != nil }))
	if sub := running["subagent"].(map[string]any); sub["sessionId"] != child || sub["mode"] != "ask" || sub["model"] != "mock-1" {
		t.Errorf("delegate call's subagent = %v", sub)
	}
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d1"), rpctest.Field("status", "completed")))
	if final["output"] != "a.go: A adds two ints.\nb.go: B doubles an int." || final["title"] != "Subagent (ask): "+task || final["parentSessionId"] != nil {
		t.Errorf("delegate call's end: %v", final)
	}
	if sub, _ := final["subagent"].(map[string]any); sub["sessionId"] != child {
		t.Errorf("delegate call's end names subagent %v", final["subagent"])
	}

	// What each model saw: the parent got the answer as the call's output;
	// the subagent a fresh conversation (its task as the question, kin's
	// prompt, told it is a subagent) and, in ask mode, only read tools,
	// neither ask, update_plan nor delegate.
	preqs := requestsOf(e.Model, question)
	if out, _ := preqs[len(preqs)-1].LastToolOutput(); out != "a.go: A adds two ints.\nb.go: B doubles an int." {
		t.Errorf("the parent's model got %q", out)
	}
	if !toolNames(preqs[0])["delegate"] {
		t.Errorf("the parent was not offered delegate: %v", toolNames(preqs[0]))
	}
	creqs := requestsOf(e.Model, task)
	if len(creqs) != 2 {
		t.Fatalf("the subagent made %d requests", len(creqs))
	}
	first := creqs[0]
	if first.LastUserText() != task || strings.Contains(first.Text(), question) || !strings.Contains(first.Instructions, "You are a subagent") {
		t.Errorf("the subagent's first request: user %q, instructions %q", first.LastUserText(), first.Instructions)
	}
	names := toolNames(first)
	for _, no := range []string{"delegate", "ask", "update_plan", "write_file", "edit_file", "bash"} {
		if names[no] {
			t.Errorf("the subagent in ask mode was offered %s: %v", no, names)
		}
	}
	if !names["read_file"] {
		t.Errorf("the subagent was not offered read_file: %v", names)
	}

	// Its usage is counted into the parent's turn.
	u := done["usage"].(map[string]any)
	if u["inputTokens"] != float64(100+200+300+500) || u["outputTokens"] != float64(10+8+20+30) {
		t.Errorf("parent's usage = %v, want the subagent's added", u)
	}
	cu := cdone["usage"].(map[string]any)
	if cu["inputTokens"] != float64(800) || cu["outputTokens"] != float64(50) {
		t.Errorf("subagent's usage = %v", cu)
	}

	// Listed under its parent, and hidden from the default list.
	var list rpc.SessionListResult
	ed.MustCall("session/list", nil, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid {
		t.Errorf("default list: %+v", list.Sessions)
	}
	ed.MustCall("session/list", rpc.SessionListParams{ParentID: sid}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != child || list.Sessions[0].ParentID != sid || list.Sessions[0].Title == "" {
		t.Errorf("subagents of %s: %+v", sid, list.Sessions)
	}
	ed.MustCall("session/list", rpc.SessionListParams{IncludeSubagents: true}, &list)
	if len(list.Sessions) != 2 {
		t.Errorf("list with subagents: %+v", list.Sessions)
	}

	// The parent's history links the call to the subagent's session.
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	var linked bool
	for _, h := range res.History {
		if h.Type == "toolCall" && h.CallID == "call_d1" {
			linked = h.Subagent != nil && h.Subagent.SessionID == child && h.Subagent.Mode == "ask" && h.Status == "completed"
		}
	}
	if !linked {
		t.Errorf("the parent's history does not link call_d1 to %s: %+v", child, res.History)
	}
	// The log is private, and names its parent.
	st, err := os.Stat(filepath.Join(e.Home, "sessions", child+".jsonl"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("subagent's log: %v %v", err, st)
	}
}

func TestSubagentSessionOpensReadOnly(t *testing.T) {
	e := newEnv(t)
	const question, task = "check the readme", "Read README.md and say its first word."
	e.Write("README.md", "Hello there\n")
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_r", Name: "read_file", Arguments: `{"path":"README.md"}`}}},
		modeltest.Reply{Text: []string{"Hello"}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "")}},
		modeltest.Reply{Text: []string{"It says Hello."}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, question)
	completed(ed, tid)
	child := ed.Wait("turn/started", nested(sid, "call_d"))["sessionId"].(string)

	// In this kin and in the next one.
	for _, ed := range []*rpctest.Editor{ed, e.connect()} {
		var res rpc.SessionResumeResult
		ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: child}, &res)
		if !res.ReadOnly || !strings.Contains(res.ReadOnlyReason, "subagent") || !strings.Contains(res.ReadOnlyReason, sid) {
			t.Errorf("resume of the subagent's session: readOnly %v %q", res.ReadOnly, res.ReadOnlyReason)
		}
		var kinds []string
		for _, h := range res.History {
			kinds = append(kinds, h.Type+":"+h.Name+h.Text)
		}
		if got := strings.Join(kinds, " "); !strings.Contains(got, "user:"+task) || !strings.Contains(got, "toolCall:read_file") || !strings.Contains(got, "assistant:Hello") {
			t.Errorf("subagent's history: %s", got)
		}
		if code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: child, Input: "more"}); code != rpc.CodeBusy || !strings.Contains(msg, "subagent") {
			t.Errorf("turn/start on a subagent's session: %d %q", code, msg)
		}
		if code, _ := ed.CallErr("session/configure", rpc.SessionConfigureParams{SessionID: child, Mode: "auto-edit"}); code != rpc.CodeBusy {
			t.Errorf("session/configure on a subagent's session: %d", code)
		}
		for _, m := range []string{"session/compact", "turn/undo"} {
			if code, msg := ed.CallErr(m, rpc.SessionIDParams{SessionID: child}); code != rpc.CodeBusy || !strings.Contains(msg, "subagent") {
				t.Errorf("%s on a subagent's session: %d %q", m, code, msg)
			}
		}
	}
	// Deleting the parent deletes its subagents' sessions.
	ed.MustCall("session/delete", rpc.SessionIDParams{SessionID: sid}, nil)
	var list rpc.SessionListResult
	ed.MustCall("session/list", rpc.SessionListParams{IncludeSubagents: true}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("after deleting the parent: %+v", list.Sessions)
	}
	if _, err := os.Stat(filepath.Join(e.Home, "sessions", child+".jsonl")); !os.IsNotExist(err) {
		t.Errorf("the subagent's log outlived its parent: %v", err)
	}
}

func TestSubagentApprovalReachesTheEditorWithBothSessions(t *testing.T) {
	e := newEnv(t)
	const question, task = "start a notes file", "Create notes.txt holding TODO."
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_w", Name: "write_file", Arguments: `{"path":"notes.txt","content":"TODO\n"}`}}},
		modeltest.Reply{Text: []string{"I could not create notes.txt: the person denied the write."}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "agent")}},
		modeltest.Reply{Text: []string{"The subagent was not allowed to write."}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, question)

	// The subagent's approval names its own session and the one it works
	// for: an editor showing the parent shows it.
	req := ed.Wait("approval/request", rpctest.Field("callId", "c_w"))
	child := ed.Wait("turn/started", nested(sid, "call_d"))["sessionId"]
	if req["sessionId"] != child || req["parentSessionId"] != sid || req["parentCallId"] != "call_d" || req["parentTurnId"] != tid ||
		req["kind"] != "tool_call" || req["tool"] != "write_file" {
		t.Fatalf("the subagent's approval: %v", req)
	}
	// While it waits, the delegate call says which subagent it runs.
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c_w"), rpctest.Field("status", "awaiting_approval"), nested(sid, "call_d")))
	// A reloaded editor showing the parent session gets it again.
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if len(res.Pending) != 1 || res.Pending[0].Approval == nil || res.Pending[0].Approval.RequestID != req["requestId"] ||
		res.Pending[0].Approval.ParentSessionID != sid || res.Pending[0].Approval.SessionID != child {
		t.Fatalf("the parent's pending questions: %+v", res.Pending)
	}
	ed.MustCall("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: "deny"}, nil)
	resolved := ed.Wait("approval/resolved", rpctest.Field("requestId", req["requestId"]))
	if resolved["decision"] != "deny" || resolved["sessionId"] != child || resolved["parentSessionId"] != sid {
		t.Errorf("approval/resolved: %v", resolved)
	}
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("parent turn: %v", done)
	}
	// The subagent was told, and said so to its parent.
	creqs := requestsOf(e.Model, task)
	if out, _ := creqs[len(creqs)-1].LastToolOutput(); !strings.Contains(out, "[denied]") || !strings.Contains(out, "The person denied this call") {
		t.Errorf("the subagent was told %q", out)
	}
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d"), rpctest.Field("status", "completed")))
	if final["output"] != "I could not create notes.txt: the person denied the write." || final["subagent"].(map[string]any)["mode"] != "agent" {
		t.Errorf("delegate call: %v", final)
	}
	if _, err := os.Stat(filepath.Join(e.WS, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt was written: %v", err)
	}
}

// An "always allow" given on a subagent's call is its parent session's
// grant: the parent, and its next subagents, are not asked again.
func TestSubagentsAlwaysAllowIsTheParentSessionsGrant(t *testing.T) {
	e := newEnv(t)
	const question, task = "make two files", "Create one.txt."
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_one", Name: "write_file", Arguments: `{"path":"one.txt","content":"1\n"}`}}},
		modeltest.Reply{Text: []string{"Created one.txt."}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "agent")}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_two", Name: "write_file", Arguments: `{"path":"two.txt","content":"2\n"}`}}},
		modeltest.Reply{Text: []string{"Both made."}})
	ed, sid := e.editor()
	var asked []string
	answerApprovals(ed, func(req map[string]any) string {
		asked = append(asked, fmt.Sprint(req["callId"]))
		return "allow_always"
	})
	if done := completed(ed, start(t, ed, sid, question)); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	if strings.Join(asked, ",") != "c_one" {
		t.Errorf("asked for %v; the parent's own write should have used the subagent's grant", asked)
	}
	var grants rpc.GrantsListResult
	ed.MustCall("grants/list", nil, &grants)
	var kept []string
	for _, g := range grants.Grants {
		if g.Scope == "session" {
			kept = append(kept, g.Key+"@"+g.SessionID)
		}
	}
	if strings.Join(kept, ",") != "tool:write_file@"+sid {
		t.Errorf("session grants: %v, want write_file for %s", kept, sid)
	}
}

func TestCancellingTheParentCancelsTheSubagentAndKillsItsCommand(t *testing.T) {
	e := newEnv(t)
	token := fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, time.Now().UnixNano()%1000)
	const question, task = "run the slow job", "Run the slow job."
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_sleep", Name: "bash", Arguments: args(map[string]any{"command": "sleep " + token + " & echo started; wait"})}}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "agent")}},
		modeltest.Reply{Text: []string{"(after the acknowledgement)"}})
	ed, sid := e.editor()
	answerApprovals(ed, func(req map[string]any) string { return "allow_once" })
	tid := start(t, ed, sid, question)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c_sleep"), nested(sid, "call_d"), func(m map[string]any) bool {
		return strings.Contains(fmt.Sprint(m["outputDelta"]), "started")
	}))
	ctid := ed.Wait("turn/started", nested(sid, "call_d"))["turnId"]
	pids := sleeping(t, token)

	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: sid}, nil)
	if done := completed(ed, tid); done["status"] != "cancelled" {
		t.Fatalf("parent: %v", done)
	}
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", ctid)); done["status"] != "cancelled" || done["parentSessionId"] != sid {
		t.Errorf("subagent: %v", done)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c_sleep"), rpctest.Field("status", "failed")))
	// A command kin killed is failed, not unknown (README, "Processes kin
	// starts"): the subagent's end is known, and nothing asks to acknowledge it.
	d := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d"), rpctest.Field("status", "failed")))
	if !strings.Contains(fmt.Sprint(d["output"]), "stopped") {
		t.Errorf("delegate call: %v", d)
	}
	gone(t, token, pids)
	t2 := start(t, ed, sid, "is it done?")
	completed(ed, t2)
	for _, r := range ed.Notes("approval/request") {
		if r["kind"] == "acknowledge_unknown" {
			t.Errorf("asked to acknowledge: %v", r)
		}
	}
}

// turn/cancel of the subagent's session stops it alone; its parent goes on
// with what it was told.
func TestCancellingTheSubagentAloneLetsTheParentGoOn(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	const question, task = "look around", "List the folder, slowly."
	e.Model.Route(modeltest.FirstUser(task), modeltest.Reply{Text: []string{"Looking", " forever"}, Hold: hold})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "")}},
		modeltest.Reply{Text: []string{"The subagent was stopped."}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, question)
	started := ed.Wait("turn/started", nested(sid, "call_d"))
	ed.Wait("turn/delta", rpctest.Field("turnId", started["turnId"]))
	var res rpc.TurnCancelResult
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: started["sessionId"].(string)}, &res)
	if !res.Cancelled {
		t.Fatal("turn/cancel of the subagent's session cancelled nothing")
	}
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("parent: %v", done)
	}
	d := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d"), rpctest.Field("status", "failed")))
	if out := fmt.Sprint(d["output"]); !strings.Contains(out, "stopped before it answered") || !strings.Contains(out, "Looking") {
		t.Errorf("delegate call: %q", out)
	}
}

// By default a subagent is offered no delegate, and one its model forces
// anyway is refused; subagents.maxDepth 2 lets a subagent delegate once
// more, each event naming its own parent.
func TestSubagentDepthLimit(t *testing.T) {
	const question, task, subtask = "dig deep", "Dig into the code.", "Dig one level deeper."
	script := func(e *env) {
		e.Model.Route(modeltest.FirstUser(subtask),
			modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d3", "Even deeper.", "")}, Usage: modeltest.Usage{Input: 7, Output: 1}},
			modeltest.Reply{Text: []string{"bottom"}, Usage: modeltest.Usage{Input: 7, Output: 1}})
		e.Model.Route(modeltest.FirstUser(task),
			modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d2", subtask, "")}, Usage: modeltest.Usage{Input: 5, Output: 1}},
			modeltest.Reply{Text: []string{"middle"}, Usage: modeltest.Usage{Input: 5, Output: 1}})
		e.Model.Route(modeltest.FirstUser(question),
			modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d1", task, "")}, Usage: modeltest.Usage{Input: 3, Output: 1}},
			modeltest.Reply{Text: []string{"top"}, Usage: modeltest.Usage{Input: 3, Output: 1}})
	}

	t.Run("default", func(t *testing.T) {
		e := newEnv(t)
		script(e)
		ed, sid := e.editor()
		if done := completed(ed, start(t, ed, sid, question)); done["status"] != "completed" {
			t.Fatalf("%v", done)
		}
		if toolNames(requestsOf(e.Model, task)[0])["delegate"] {
			t.Error("a subagent was offered delegate")
		}
		d2 := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d2"), rpctest.Field("status", "failed")))
		if !strings.Contains(fmt.Sprint(d2["output"]), `no tool named "delegate"`) {
			t.Errorf("the subagent's forced delegate: %v", d2)
		}
		if len(requestsOf(e.Model, subtask)) != 0 {
			t.Error("a second level of subagent ran")
		}
		var list rpc.SessionListResult
		ed.MustCall("session/list", rpc.SessionListParams{IncludeSubagents: true}, &list)
		if len(list.Sessions) != 2 {
			t.Errorf("sessions: %+v", list.Sessions)
		}
	})

	t.Run("maxDepth 2", func(t *testing.T) {
		e := newEnv(t)
		e.settings(`{"subagents":{"maxDepth":2}}`)
		script(e)
		ed, sid := e.editor()
		done := completed(ed, start(t, ed, sid, question))
		if done["status"] != "completed" {
			t.Fatalf("%v", done)
		}
		child := ed.Wait("turn/started", nested(sid, "call_d1"))["sessionId"].(string)
		grand := ed.Wait("turn/started", nested(child, "call_d2"))
		if grand["sessionId"] == child || grand["input"] != subtask {
			t.Errorf("the grandchild's turn/started: %v", grand)
		}
		if !toolNames(requestsOf(e.Model, task)[0])["delegate"] || toolNames(requestsOf(e.Model, subtask)[0])["delegate"] {
			t.Error("delegate offered at the wrong depths")
		}
		d3 := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d3"), rpctest.Field("status", "failed")))
		if d3["parentSessionId"] != child || !strings.Contains(fmt.Sprint(d3["output"]), `no tool named "delegate"`) {
			t.Errorf("the grandchild's forced delegate: %v", d3)
		}
		// Every level's usage reaches the person's turn.
		if u := done["usage"].(map[string]any); u["inputTokens"] != float64(2*(3+5+7)) {
			t.Errorf("usage %v", u)
		}
		var list rpc.SessionListResult
		ed.MustCall("session/list", rpc.SessionListParams{ParentID: child}, &list)
		if len(list.Sessions) != 1 || list.Sessions[0].SessionID != grand["sessionId"] {
			t.Errorf("the subagent's subagents: %+v", list.Sessions)
		}
	})
}

// Delegate calls of one answer run side by side, as many at once as
// subagents.maxRunning; one beyond it waits (and says so) until another
// ends.
func TestParallelDelegatesBeyondMaxRunningWait(t *testing.T) {
	for _, max := range []int{1, 2} {
		t.Run(fmt.Sprintf("maxRunning %d", max), func(t *testing.T) {
			e := newEnv(t)
			e.settings(fmt.Sprintf(`{"subagents":{"maxRunning":%d}}`, max))
			holdA, holdB := make(chan struct{}), make(chan struct{})
			const question = "compare the two"
			e.Model.Route(modeltest.FirstUser("Task A."), modeltest.Reply{Text: []string{"A ", "done"}, Hold: holdA})
			e.Model.Route(modeltest.FirstUser("Task B."), modeltest.Reply{Text: []string{"B ", "done"}, Hold: holdB})
			e.Model.Route(modeltest.FirstUser(question),
				modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_a", "Task A.", ""), delegateCall("call_b", "Task B.", "")}},
				modeltest.Reply{Text: []string{"compared"}})
			ed, sid := e.editor()
			tid := start(t, ed, sid, question)
			startedCall := func(m map[string]any) bool { return m["parentSessionId"] == sid }
			first := ed.Wait("turn/started", startedCall)
			if max == 1 {
				// The other call waits, and says so; it cannot start while
				// the first holds the one slot.
				other := map[string]string{"call_a": "call_b", "call_b": "call_a"}[first["parentCallId"].(string)]
				w := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", other), func(m map[string]any) bool {
					sub, _ := m["subagent"].(map[string]any)
					return sub["waiting"] == true
				}))
				if sub := w["subagent"].(map[string]any); sub["sessionId"] != nil || sub["mode"] != "ask" {
					t.Errorf("waiting call: %v", w)
				}
				if n := len(ed.Notes("turn/started")); n != 2 { // the parent's and the first subagent's
					t.Fatalf("%d turns started while one subagent held the only slot", n)
				}
			} else {
				// Both run at once: the second starts while the first is
				// held mid-answer.
				ed.Wait("turn/started", func(m map[string]any) bool { return startedCall(m) && m["turnId"] != first["turnId"] })
			}
			close(holdA)
			close(holdB)
			if done := completed(ed, tid); done["status"] != "completed" {
				t.Fatalf("%v", done)
			}
			// Each answer went back to its own call, in the order the model
			// asked for them.
			preqs := requestsOf(e.Model, question)
			var outs []string
			for _, it := range preqs[len(preqs)-1].Input {
				if it["type"] == "function_call_output" {
					outs = append(outs, fmt.Sprint(it["call_id"], "=", it["output"]))
				}
			}
			if strings.Join(outs, ",") != "call_a=A done,call_b=B done" {
				t.Errorf("outputs the parent's model got: %v", outs)
			}
			if max == 1 {
				// Never two at once: the second started after the first ended.
				var order []string
				for _, n := range ed.Raw() {
					var m map[string]any
					_ = json.Unmarshal(n.Params, &m)
					if m["parentSessionId"] == sid && (n.Method == "turn/started" || n.Method == "turn/completed") {
						order = append(order, n.Method)
					}
				}
				if strings.Join(order, ",") != "turn/started,turn/completed,turn/started,turn/completed" {
					t.Errorf("subagents' turns: %v", order)
				}
			}
		})
	}
}

// Model output that forces a wider mode gets the parent's: an ask-mode
// session's subagent runs in ask mode whatever the call asks for, and its
// forced writes are refused without asking anyone.
func TestHostileDelegateCannotWidenTheMode(t *testing.T) {
	e := newEnv(t)
	const question, task = "just look", "Rewrite main.go."
	target := e.Write("main.go", "package main\n")
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "c_w", Name: "write_file", Arguments: `{"path":"main.go","content":"pwned\n"}`},
			{ID: "c_sh", Name: "bash", Arguments: `{"command":"echo pwned > main.go"}`}}},
		modeltest.Reply{Text: []string{"I was not allowed to change anything."}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "auto-edit")}},
		modeltest.Reply{Text: []string{"Nothing changed."}})
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{Mode: "ask"}).Session.SessionID
	if done := completed(ed, start(t, ed, sid, question)); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	d := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_d"), rpctest.Field("status", "completed")))
	if d["title"] != "Subagent (ask): "+task || d["subagent"].(map[string]any)["mode"] != "ask" {
		t.Errorf("delegate call: %v", d)
	}
	for _, c := range []string{"c_w", "c_sh"} {
		r := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", c), rpctest.Field("status", "denied")))
		if !strings.Contains(fmt.Sprint(r["output"]), "ask mode") {
			t.Errorf("%s: %v", c, r)
		}
	}
	if len(ed.Notes("approval/request")) != 0 {
		t.Errorf("approvals were asked: %v", ed.Notes("approval/request"))
	}
	names := toolNames(requestsOf(e.Model, task)[0])
	if names["write_file"] || names["bash"] {
		t.Errorf("the subagent was offered %v", names)
	}
	if b, _ := os.ReadFile(target); string(b) != "package main\n" {
		t.Errorf("main.go = %q", b)
	}
	var child rpc.SessionListResult
	ed.MustCall("session/list", rpc.SessionListParams{ParentID: sid}, &child)
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: child.Sessions[0].SessionID}, &res)
	if res.Session.Mode != "ask" {
		t.Errorf("the subagent's session is in mode %q", res.Session.Mode)
	}
}

// What a subagent's tools change is kept as its parent's turn's: undoing
// the parent's turn puts it back.
func TestUndoingTheParentsTurnUndoesWhatItsSubagentChanged(t *testing.T) {
	e := newEnv(t)
	const question, task = "tidy up", "Rewrite notes.txt as a list."
	notes := e.Write("notes.txt", "a b\n")
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_w", Name: "write_file", Arguments: `{"path":"notes.txt","content":"- a\n- b\n"}`}}},
		modeltest.Reply{Text: []string{"Rewrote notes.txt."}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "auto-edit")}},
		modeltest.Reply{Text: []string{"Tidied."}})
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{Mode: "auto-edit"}).Session.SessionID
	tid := start(t, ed, sid, question)
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	if b, _ := os.ReadFile(notes); string(b) != "- a\n- b\n" || len(ed.Notes("approval/request")) != 0 {
		t.Fatalf("the auto-edit subagent's write: %q, approvals %v", b, ed.Notes("approval/request"))
	}
	var u rpc.TurnUndoResult
	ed.MustCall("turn/undo", rpc.TurnUndoParams{SessionID: sid}, &u)
	if u.TurnID != tid || len(u.Restored) != 1 || u.Restored[0] != notes {
		t.Errorf("undo: %+v", u)
	}
	if b, _ := os.ReadFile(notes); string(b) != "a b\n" {
		t.Errorf("notes.txt after undo = %q", b)
	}
}

// The logs a kin killed mid-subagent leaves: the next kin that owns the
// parent closes the subagent's turn and the delegate call, failed for a
// subagent in ask mode (it only read), unknown for one in agent mode.
func TestReopenedParentClosesItsSubagents(t *testing.T) {
	for _, mode := range []string{"ask", "agent"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			dir := filepath.Join(e.Home, "sessions")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			write := func(id, lines string) {
				if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(lines), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("s_parent", `{"type":"session","time":"2026-11-01T10:00:00Z","sessionId":"s_parent","title":"look","roots":["`+e.WS+`"]}
{"type":"user","time":"2026-11-01T10:00:01Z","turnId":"t_p","text":"look around"}
{"type":"toolCall","time":"2026-11-01T10:00:02Z","turnId":"t_p","callId":"call_d","name":"delegate","arguments":"{\"task\":\"look\",\"mode\":\"`+mode+`\"}"}
`)
			write("s_child", `{"type":"session","time":"2026-11-01T10:00:03Z","sessionId":"s_child","title":"look","roots":["`+e.WS+`"],"mode":"`+mode+`","parent":{"sessionId":"s_parent","turnId":"t_p","callId":"call_d","depth":1}}
{"type":"user","time":"2026-11-01T10:00:04Z","turnId":"t_c","text":"look"}
{"type":"assistant","time":"2026-11-01T10:00:05Z","turnId":"t_c","text":"looking"}
`)
			ed := e.connect()
			var res rpc.SessionResumeResult
			ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: "s_parent"}, &res)
			want := map[string]string{"ask": "failed", "agent": "unknown"}[mode]
			var call *rpc.HistoryItem
			for i, h := range res.History {
				if h.CallID == "call_d" {
					call = &res.History[i]
				}
			}
			if call == nil || call.Status != want || !strings.Contains(call.Output, "s_child") || call.Subagent == nil || call.Subagent.SessionID != "s_child" {
				t.Fatalf("the delegate call: %+v", call)
			}
			ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: "s_child"}, &res)
			last := res.History[len(res.History)-1]
			if last.Type != "turn" || last.Status != "failed" || last.Error != "kin stopped during this turn" || !res.ReadOnly {
				t.Errorf("the subagent's session: %+v, readOnly %v", last, res.ReadOnly)
			}
		})
	}
}

// A parent switched to ask mode while its subagent runs narrows the
// subagent at its next call: its write is refused, nobody is asked.
func TestNarrowingTheParentNarrowsItsRunningSubagent(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	const question, task = "rewrite it", "Rewrite main.go."
	target := e.Write("main.go", "package main\n")
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Text: []string{"Rewriting", " now."}, Hold: hold,
			Calls: []modeltest.Call{{ID: "c_w", Name: "write_file", Arguments: `{"path":"main.go","content":"changed\n"}`}}},
		modeltest.Reply{Text: []string{"Not allowed."}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d", task, "agent")}},
		modeltest.Reply{Text: []string{"ok"}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, question)
	ed.Wait("turn/delta", nested(sid, "call_d"))
	ed.MustCall("session/configure", rpc.SessionConfigureParams{SessionID: sid, Mode: "ask"}, nil)
	close(hold)
	completed(ed, tid)
	w := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "c_w"), rpctest.Field("status", "denied")))
	if !strings.Contains(fmt.Sprint(w["output"]), "ask mode") || len(ed.Notes("approval/request")) != 0 {
		t.Errorf("the subagent's write after the parent went to ask mode: %v (approvals %v)", w, ed.Notes("approval/request"))
	}
	if b, _ := os.ReadFile(target); string(b) != "package main\n" {
		t.Errorf("main.go = %q", b)
	}
}

// A grandchild subagent's approval is the person's session's too: a
// reloaded editor showing that session gets it (it was the middle
// subagent's only, so the person's session listed nothing while its turn
// waited on it), and "always allow in this session" given there is kept
// for the person's session (it was kept for the middle subagent, whose
// grants nothing else reads).
func TestAGrandchildsApprovalIsThePersonsSession(t *testing.T) {
	e := newEnv(t)
	e.settings(`{"subagents":{"maxDepth":2}}`)
	const question, task, subtask = "make two notes", "Delegate the first note.", "Create one.txt holding 1."
	e.Model.Route(modeltest.FirstUser(subtask),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_w1", Name: "write_file", Arguments: `{"path":"one.txt","content":"1\n"}`}}},
		modeltest.Reply{Text: []string{"wrote one.txt"}})
	e.Model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d2", subtask, "agent")}},
		modeltest.Reply{Text: []string{"delegated"}})
	e.Model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{delegateCall("call_d1", task, "agent")}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_w2", Name: "write_file", Arguments: `{"path":"two.txt","content":"2\n"}`}}},
		modeltest.Reply{Text: []string{"both written"}})
	ed, sid := e.editor()
	tid := start(t, ed, sid, question)
	req := ed.Wait("approval/request", rpctest.Field("callId", "c_w1"))
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	if len(res.Pending) != 1 || res.Pending[0].Approval == nil || res.Pending[0].Approval.RequestID != req["requestId"] {
		t.Fatalf("the person's session lists %+v while its turn waits on the grandchild's approval", res.Pending)
	}
	ed.MustCall("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: "allow_always"}, nil)
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Fatalf("%v", done)
	}
	// the person's own next write of the session ran under that grant
	if n := len(ed.Notes("approval/request")); n != 1 {
		t.Errorf("%d approvals asked, want 1 (the grant given to the grandchild's call is the session's)", n)
	}
	for name, want := range map[string]string{"one.txt": "1\n", "two.txt": "2\n"} {
		if b, err := os.ReadFile(filepath.Join(e.WS, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
}
