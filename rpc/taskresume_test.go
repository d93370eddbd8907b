package rpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// crashedTask runs a call that becomes a task, and returns a KIN_HOME as a
// kin killed while it polled leaves it: a copy of the home taken once the
// call shows working (the task record is durable before the first poll),
// so its log has the call and its task and no result. The first kin then
// goes away.
func crashedTask(t *testing.T, s *mcptest.TaskServer) (w *world, sid string) {
	t.Helper()
	w, ed, sid, _ := tasksWorld(t, s)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "working")))
	home := rpctest.Crashed(t, w.home)
	goneAway(t, ed)
	// The copy keeps the configuration: "jobs" launches the same server
	// (the same URL) for the next kin, which follows a task only there.
	w.home = home
	return w, sid
}

// goneAway ends the kin ed serves, as a crash would: it polls the task,
// and asks the model, no more. Left running, it went on following the
// task the next kin resumes and, once the task ended, sent its own next
// model request, which could come after the next kin's and be the one a
// test read (TestResumeGoesOnPollingATaskKinLeft failed so under load).
func goneAway(t *testing.T, ed *rpctest.Editor) {
	t.Helper()
	ed.Conn.Close()
	select {
	case <-ed.Done:
	case <-time.After(rpctest.Timeout):
		t.Fatal("the first kin did not stop when its editor went away")
	}
}

// restarted is the next kin on the crashed home: the server is approved
// and connected before the session is resumed.
func restarted(t *testing.T, w *world, sid string) (*rpctest.Editor, rpc.SessionResumeResult) {
	t.Helper()
	ed := w.editor()
	allowLaunch(ed, "jobs")
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	return ed, res
}

// answeredFirst fails the test unless kin's answer to the editor's
// request of method came before every notification of note kin sent after
// that request: the editor has the history a follow-up updates before the
// update (a task that ended at once would otherwise show working for ever).
func answeredFirst(t *testing.T, wire []rpctest.Frame, method, note string) {
	t.Helper()
	var id json.RawMessage
	asked := false
	for _, f := range wire {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(f.Msg, &m)
		switch {
		case f.From == "editor" && m.Method == method:
			id, asked = m.ID, true
		case !asked || f.From != "kin":
		case m.Method == "" && string(m.ID) == string(id):
			return
		case m.Method == note:
			t.Fatalf("%s came before the answer to %s: %s", note, method, f.Msg)
		}
	}
	t.Fatalf("no answer to %s", method)
}

// kin stops while a call runs as an MCP task; the next kin, on resume,
// goes on polling the task (the call is never sent again), shows the call
// working, and ends it with the task's result: in the session log, on the
// wire, and in the next model request, where the output sits next to its
// call.
func TestResumeGoesOnPollingATaskKinLeft(t *testing.T) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "indexing", "indexed 2 files")}
	w, sid := crashedTask(t, s)
	finish.Store(true)
	ed, res := restarted(t, w, sid)
	if res.ReadOnly {
		t.Fatalf("resumed read-only: %s", res.ReadOnlyReason)
	}
	if h := res.History; len(h) < 2 || h[1].CallID != "j1" || h[1].Status != "working" {
		t.Errorf("history shows the call %+v, want it working", h)
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "working")))
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(final["output"]), "indexed 2 files") {
		t.Errorf("final %v", final)
	}
	answeredFirst(t, ed.Wire(), "session/resume", "turn/toolCall")
	if s.Calls.Load() != 1 {
		t.Errorf("the server saw %d calls; the task must be polled, never the call sent again", s.Calls.Load())
	}
	log := sessionLog(t, w.home, sid)
	if !strings.Contains(log, `"type":"task"`) || !strings.Contains(log, `"taskId":"`+mcptest.TaskID+`"`) {
		t.Errorf("no task record:\n%s", log)
	}
	if strings.Contains(log, `"status":"unknown"`) || !strings.Contains(log, "indexed 2 files") {
		t.Errorf("the call's result is not the task's:\n%s", log)
	}
	// The next turn's request carries the result, right after its call.
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	completed(ed, start(t, ed, sid, "and?"))
	reqs := w.model.Requests()
	if len(reqs) != 2 {
		t.Errorf("the model got %d requests, want 2: the first kin's first and the next kin's (a stopped kin asks nothing more)", len(reqs))
	}
	in := reqs[len(reqs)-1].Input
	var kinds []string
	for _, it := range in {
		k := fmt.Sprint(it["type"])
		if k == "message" || k == "<nil>" {
			k = fmt.Sprint(it["role"])
		}
		kinds = append(kinds, k)
		if it["type"] == "function_call_output" && !strings.Contains(fmt.Sprint(it["output"]), "indexed 2 files") {
			t.Errorf("the model got %v", it["output"])
		}
	}
	if got := strings.Join(kinds, ","); !strings.HasPrefix(got, "user,function_call,function_call_output,") || !strings.HasSuffix(got, ",user") {
		t.Errorf("next request's items: %s", got)
	}
}

// A task the server no longer knows after the restart (it expired) ends
// the call failed with the server's reason, never unknown, never re-sent.
func TestResumedTaskThatExpiredFails(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	w, sid := crashedTask(t, s)
	s.Gone.Store(true)
	ed, _ := restarted(t, w, sid)
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "failed")))
	out := fmt.Sprint(final["output"])
	if !strings.Contains(out, "which the server no longer knows") || !strings.Contains(out, "expired") {
		t.Errorf("final %v", final)
	}
	if s.Calls.Load() != 1 {
		t.Errorf("the server saw %d calls", s.Calls.Load())
	}
}

// A task whose server is no longer configured after the restart ends the
// call unknown, saying so.
func TestResumedTaskWithoutItsServerIsUnknown(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	w, sid := crashedTask(t, s)
	w.config(map[string]any{})
	ed := w.editor()
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "unknown")))
	if !strings.Contains(fmt.Sprint(final["output"]), "no MCP server named jobs") {
		t.Errorf("final %v", final)
	}
}

func sessionLog(t *testing.T, home, sid string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "sessions", sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A task that asks a question after kin restarted (input_required, whether
// it already waited when kin stopped or turns to it once resumed) puts the
// server's question to the person through kin's usual elicitation path,
// on the call it belongs to; the answer goes back to the server with
// tasks/update (the live path's code), and polling goes on to the end.
func TestResumedTaskAsksThePersonAndGoesOn(t *testing.T) {
	for _, already := range []bool{true, false} {
		t.Run(fmt.Sprintf("input_required at restart %v", already), func(t *testing.T) {
			var ask atomic.Bool
			s := &mcptest.TaskServer{State: func(n int, answers map[string]json.RawMessage) map[string]any {
				if a, ok := answers["confirm"]; ok {
					return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "confirmed " + string(a)}}}}
				}
				if !ask.Load() {
					return map[string]any{"status": "working", "statusMessage": fmt.Sprintf("indexing %d", n)}
				}
				return map[string]any{"status": "input_required", "statusMessage": "needs a yes", "inputRequests": map[string]any{
					"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "Overwrite the index?",
						"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
				}}
			}}
			w, sid := crashedTask(t, s)
			if already {
				ask.Store(true)
			}
			ed := w.editor()
			asked := acceptsTheTasksQuestion(t, ed, sid, "j1")
			allowLaunch(ed, "jobs")
			var res rpc.SessionResumeResult
			ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
			if !already {
				// The resumed kin has seen the task working (the first
				// kin's polls count too, so any count).
				ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "working"), func(m map[string]any) bool {
					return strings.HasPrefix(fmt.Sprint(m["statusMessage"]), "task working: indexing ")
				}))
				ask.Store(true)
			}
			final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "completed")))
			if out := fmt.Sprint(final["output"]); !strings.Contains(out, "confirmed") || !strings.Contains(out, `"ok":true`) {
				t.Errorf("final %v", final)
			}
			if asked.Load() != 1 || s.Updates.Load() != 1 || s.Calls.Load() != 1 || s.Cancels.Load() != 0 {
				t.Errorf("asked %d, updates %d, calls %d, cancels %d", asked.Load(), s.Updates.Load(), s.Calls.Load(), s.Cancels.Load())
			}
			if log := sessionLog(t, w.home, sid); strings.Contains(log, `"status":"unknown"`) || !strings.Contains(log, "confirmed") {
				t.Errorf("log:\n%s", log)
			}
		})
	}
}

// A task id longer than calltool.MaxTaskID is not recorded, so a kin that
// stops while the task runs cannot follow it after the restart: the call
// ends unknown on resume (it may have happened), never completed, never
// sent again.
func TestResumedTaskWithAnIDTooLongIsUnknown(t *testing.T) {
	s := &mcptest.TaskServer{ID: strings.Repeat("t", calltool.MaxTaskID+1), State: func(n int, _ map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	w, sid := crashedTask(t, s)
	if log := sessionLog(t, w.home, sid); strings.Contains(log, `"type":"task"`) {
		t.Errorf("a task id of %d bytes was recorded:\n%s", calltool.MaxTaskID+1, log)
	}
	ed, res := restarted(t, w, sid)
	if h := res.History; len(h) < 2 || h[1].CallID != "j1" || h[1].Status != "unknown" {
		t.Errorf("history shows the call %+v, want it unknown", h)
	}
	if !strings.Contains(sessionLog(t, w.home, sid), "kin stopped while this call ran: it may have happened") {
		t.Errorf("log:\n%s", sessionLog(t, w.home, sid))
	}
	if n := ed.Count("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "completed"))); n != 0 {
		t.Errorf("the call completed %d times", n)
	}
	if s.Calls.Load() != 1 {
		t.Errorf("the server saw %d calls", s.Calls.Load())
	}
}

// A task a SUBAGENT's call started, when kin restarts, is followed once
// the parent session is resumed: the delegate call waits on it (it shows
// working on the parent), the task's result closes the subagent's call in
// the subagent's log, and the delegate call ends with it. The subagent's
// turn cannot go on, so it gave no answer: the call ends failed, saying
// what the task gave, never unknown, never sent again.
//
// With asks, the task asks a question once resumed: it is put to the
// person on the delegate call (the subagent's session is not loaded), and
// the answer goes back to the server.
func TestSubagentTaskIsFollowedWhenTheParentIsResumed(t *testing.T) {
	t.Run("working", func(t *testing.T) { subagentTaskFollowed(t, false) })
	t.Run("asks", func(t *testing.T) { subagentTaskFollowed(t, true) })
}

func subagentTaskFollowed(t *testing.T, asks bool) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: func(n int, answers map[string]json.RawMessage) map[string]any {
		if !finish.Load() {
			return map[string]any{"status": "working", "statusMessage": fmt.Sprintf("indexing %d", n)}
		}
		if _, ok := answers["confirm"]; asks && !ok {
			return map[string]any{"status": "input_required", "inputRequests": map[string]any{
				"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "Overwrite the index?",
					"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
			}}
		}
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "indexed 2 files"}}}}
	}}
	url := mcptest.ServeHTTPHandler(t, s).URL
	w, ed, sid, child := subagentTaskWorld(t, url)
	home := rpctest.Crashed(t, w.home)
	goneAway(t, ed)
	w.home = home
	w.config(map[string]any{"jobs": map[string]any{"type": "http", "url": url}})
	if !strings.Contains(sessionLog(t, w.home, child), `"type":"task"`) {
		t.Fatalf("the subagent's task was not recorded:\n%s", sessionLog(t, w.home, child))
	}

	ed2, res := restarted(t, w, sid)
	asked := acceptsTheTasksQuestion(t, ed2, sid, "d1")
	shown := false
	for _, h := range res.History {
		if h.CallID == "d1" {
			shown = true
			if h.Status != "working" || h.Subagent == nil || h.Subagent.SessionID != child {
				t.Errorf("the delegate call after the restart: %+v, want it working, with its subagent", h)
			}
		}
	}
	if !shown {
		t.Errorf("no delegate call in the history: %+v", res.History)
	}
	ed2.Wait("turn/toolCall", rpctest.All(rpctest.Field("sessionId", sid), rpctest.Field("callId", "d1"), rpctest.Field("status", "working"), func(m map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(m["statusMessage"]), "task working: indexing ")
	}))
	finish.Store(true)
	final := ed2.Wait("turn/toolCall", rpctest.All(rpctest.Field("sessionId", sid), rpctest.Field("callId", "d1"), rpctest.Field("status", "failed")))
	out := fmt.Sprint(final["output"])
	if !strings.Contains(out, "kin stopped while this subagent (session "+child+") ran in agent mode, and it gave no answer") ||
		!strings.Contains(out, "mcp__jobs__job ended completed:") || !strings.Contains(out, "indexed 2 files") {
		t.Errorf("the delegate call's end: %v", final)
	}
	if sub, _ := final["subagent"].(map[string]any); sub["sessionId"] != child {
		t.Errorf("the delegate call's end names subagent %v", final["subagent"])
	}
	clog := sessionLog(t, w.home, child)
	if strings.Contains(clog, `"status":"unknown"`) || !strings.Contains(clog, "indexed 2 files") {
		t.Errorf("the subagent's log:\n%s", clog)
	}
	if plog := sessionLog(t, w.home, sid); strings.Contains(plog, `"status":"unknown"`) {
		t.Errorf("the parent's log:\n%s", plog)
	}
	if s.Calls.Load() != 1 {
		t.Errorf("the server saw %d calls", s.Calls.Load())
	}
	if want := map[bool]int64{false: 0, true: 1}[asks]; asked.Load() != want || s.Updates.Load() != want {
		t.Errorf("asked %d, updates %d, want %d", asked.Load(), s.Updates.Load(), want)
	}
}

// acceptsTheTasksQuestion has ed accept the task server's question, which
// must come for session sid on call callID, and counts the questions.
func acceptsTheTasksQuestion(t *testing.T, ed *rpctest.Editor, sid, callID string) *atomic.Int64 {
	t.Helper()
	var asked atomic.Int64
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "elicitation/request" {
			return
		}
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		asked.Add(1)
		if req["message"] != "Overwrite the index?" || req["sessionId"] != sid || req["callId"] != callID {
			t.Errorf("elicitation %v", req)
		}
		go ed.Call("elicitation/respond", map[string]any{"requestId": req["requestId"], "action": "accept", "content": map[string]any{"ok": true}}, nil)
	})
	return &asked
}

// A session deleted while this kin follows a task a stopped kin left:
// kin stops following it as it stops a cancelled call's (tasks/cancel),
// so the deleted session's task polls, reports and asks no more (it went
// on until it ended, asking the person in a session that was gone).
func TestDeletingASessionStopsFollowingItsTask(t *testing.T) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "indexing", "indexed 2 files")}
	w, sid := crashedTask(t, s)
	ed, _ := restarted(t, w, sid)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), func(m map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(m["statusMessage"]), "task working: indexing")
	}))
	ed.MustCall("session/delete", rpc.SessionIDParams{SessionID: sid}, nil)
	deadline := time.Now().Add(10 * time.Second)
	for s.Cancels.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if s.Cancels.Load() != 1 {
		t.Fatalf("tasks/cancel sent %d times after the session was deleted", s.Cancels.Load())
	}
	time.Sleep(100 * time.Millisecond) // a status already on its way
	j1 := rpctest.Field("callId", "j1")
	seen := ed.Count("turn/toolCall", j1)
	time.Sleep(300 * time.Millisecond) // thirty poll intervals
	if n := ed.Count("turn/toolCall", j1); n != seen {
		t.Errorf("the deleted session's task reported %d more times", n-seen)
	}
}
