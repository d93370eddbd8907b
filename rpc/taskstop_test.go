package rpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// closed waits for kin to stop after the editor closed its connection.
func closed(t *testing.T, ed *rpctest.Editor) {
	t.Helper()
	ed.Conn.Close()
	select {
	case <-ed.Done:
	case <-time.After(rpctest.Timeout):
		t.Fatal("kin did not stop after the editor closed the connection")
	}
}

// The editor closes its connection (the person closes the editor) while
// a call runs as an MCP task: kin stops, and the person's job must not go
// with it (README: the next kin goes on polling it). No tasks/cancel
// reaches the server, the call stays open in the log (its turn ended), and
// the next kin, resuming the session, follows the task to its result.
func TestClosingTheEditorLeavesTheTaskRunning(t *testing.T) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "indexing", "indexed 2 files")}
	w, ed, sid, _ := tasksWorld(t, s)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "working")))
	closed(t, ed)

	if n := s.Cancels.Load(); n != 0 {
		t.Errorf("tasks/cancel sent %d times when the editor went away: the person's job was stopped", n)
	}
	log := sessionLog(t, w.home, sid)
	if strings.Contains(log, `"type":"toolResult"`) {
		t.Errorf("the call was closed when kin stopped; it must stay open for the next kin:\n%s", log)
	}
	if !strings.Contains(log, `"type":"turn"`) {
		t.Errorf("the turn's end is not on record:\n%s", log)
	}

	finish.Store(true)
	ed2, res := restarted(t, w, sid)
	if h := res.History; len(h) < 2 || h[1].CallID != "j1" || h[1].Status != "working" {
		t.Errorf("history shows the call %+v, want it working", h)
	}
	final := ed2.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(final["output"]), "indexed 2 files") {
		t.Errorf("final %v", final)
	}
	if s.Calls.Load() != 1 || s.Cancels.Load() != 0 {
		t.Errorf("the server saw %d calls, %d cancels", s.Calls.Load(), s.Cancels.Load())
	}
	log = sessionLog(t, w.home, sid)
	if strings.Contains(log, `"status":"unknown"`) || !strings.Contains(log, "indexed 2 files") {
		t.Errorf("the call's result is not the task's:\n%s", log)
	}
	// The next turn's request is well formed: the result right after its
	// call, before the next question.
	w.model.Script(modeltest.Reply{Text: []string{"ok"}})
	completed(ed2, start(t, ed2, sid, "and?"))
	reqs := w.model.Requests()
	var kinds []string
	for _, it := range reqs[len(reqs)-1].Input {
		k := fmt.Sprint(it["type"])
		if k == "message" || k == "<nil>" {
			k = fmt.Sprint(it["role"])
		}
		kinds = append(kinds, k)
	}
	if got := strings.Join(kinds, ","); !strings.HasPrefix(got, "user,function_call,function_call_output,") || !strings.HasSuffix(got, ",user") {
		t.Errorf("next request's items: %s", got)
	}
}

// turn/cancel is the person stopping the turn: the task is cancelled on
// the server (tasks/cancel) and the call ends; closing the editor
// afterwards leaves nothing open.
func TestCancellingTheTurnStillCancelsTheTask(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	w, ed, sid, _ := tasksWorld(t, s)
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "working")))
	ed.MustCall("turn/cancel", map[string]any{"sessionId": sid}, nil)
	ed.Wait("turn/completed", rpctest.Field("sessionId", sid))
	closed(t, ed)
	if n := s.Cancels.Load(); n != 1 {
		t.Errorf("tasks/cancel sent %d times after turn/cancel, want 1", n)
	}
	log := sessionLog(t, w.home, sid)
	if !strings.Contains(log, `"type":"toolResult"`) {
		t.Errorf("the cancelled call has no result:\n%s", log)
	}
}

// The editor closes its connection while a SUBAGENT's call runs as an MCP
// task: the task is left running (no tasks/cancel), the subagent's call
// and its delegate call stay open (both turns ended), and the next kin,
// resuming the parent session, follows the task through the delegate
// call, as after a crash.
func TestClosingTheEditorLeavesASubagentsTaskRunning(t *testing.T) {
	var finish atomic.Bool
	s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "indexing", "indexed 2 files")}
	w, ed, sid, child := subagentTaskWorld(t, mcptest.ServeHTTPHandler(t, s).URL)
	closed(t, ed)

	if n := s.Cancels.Load(); n != 0 {
		t.Errorf("tasks/cancel sent %d times when the editor went away", n)
	}
	if clog := sessionLog(t, w.home, child); strings.Contains(clog, `"type":"toolResult"`) || !strings.Contains(clog, `"type":"turn"`) {
		t.Errorf("the subagent's log, want its call open and its turn ended:\n%s", clog)
	}
	if plog := sessionLog(t, w.home, sid); strings.Contains(plog, `"type":"toolResult"`) || !strings.Contains(plog, `"type":"turn"`) {
		t.Errorf("the parent's log, want the delegate call open and its turn ended:\n%s", plog)
	}

	finish.Store(true)
	ed2, _ := restarted(t, w, sid)
	final := ed2.Wait("turn/toolCall", rpctest.All(rpctest.Field("sessionId", sid), rpctest.Field("callId", "d1"), rpctest.Field("status", "failed")))
	if out := fmt.Sprint(final["output"]); !strings.Contains(out, "mcp__jobs__job ended completed:") || !strings.Contains(out, "indexed 2 files") {
		t.Errorf("the delegate call's end: %v", final)
	}
	if clog := sessionLog(t, w.home, child); strings.Contains(clog, `"status":"unknown"`) || !strings.Contains(clog, "indexed 2 files") {
		t.Errorf("the subagent's log:\n%s", clog)
	}
	if s.Calls.Load() != 1 || s.Cancels.Load() != 0 {
		t.Errorf("the server saw %d calls, %d cancels", s.Calls.Load(), s.Cancels.Load())
	}
}

// The editor closes its connection while the task waits on a question
// put to the person: the question is withdrawn because kin stops, which
// is no decline by the person, so the task is left running too.
func TestClosingTheEditorDuringATasksQuestionLeavesTheTaskRunning(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, answers map[string]json.RawMessage) map[string]any {
		if _, ok := answers["confirm"]; ok {
			return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "confirmed"}}}}
		}
		return map[string]any{"status": "input_required", "inputRequests": map[string]any{
			"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "Overwrite the index?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
		}}
	}}
	w, ed, sid, _ := tasksWorld(t, s)
	ed.Wait("elicitation/request", rpctest.Field("callId", "j1"))
	closed(t, ed)
	if n := s.Cancels.Load(); n != 0 {
		t.Errorf("tasks/cancel sent %d times when the editor went away during the task's question", n)
	}
	if log := sessionLog(t, w.home, sid); strings.Contains(log, `"type":"toolResult"`) || !strings.Contains(log, `"type":"turn"`) {
		t.Errorf("want the call open and the turn ended:\n%s", log)
	}
	// The next kin puts the question again and follows the task to its end.
	ed2 := w.editor()
	acceptsTheTasksQuestion(t, ed2, sid, "j1")
	allowLaunch(ed2, "jobs")
	ed2.MustCall("session/resume", map[string]any{"sessionId": sid}, nil)
	ed2.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "completed")))
	if s.Calls.Load() != 1 || s.Cancels.Load() != 0 || s.Updates.Load() != 1 {
		t.Errorf("the server saw %d calls, %d cancels, %d updates", s.Calls.Load(), s.Cancels.Load(), s.Updates.Load())
	}
}
