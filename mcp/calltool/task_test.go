package calltool_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

func taskTool(t *testing.T, s *mcptest.TaskServer) (*calltool.Tool, *binding) {
	t.Helper()
	b := dial(t, mcptest.HTTPConfig("tasks", mcptest.ServeHTTPHandler(t, s).URL, nil))
	return tools(t, b, false)["job"], b
}

// run runs the call and collects what it reported as it went.
func run(ctx context.Context, t *testing.T, tl *calltool.Tool) (tool.Result, string) {
	t.Helper()
	var mu sync.Mutex
	var out strings.Builder
	r := prepare(t, tl, `{}`).Run(ctx, func(s string) {
		mu.Lock()
		out.WriteString(s)
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	return r, out.String()
}

// A call the server turns into a task is followed to its result: polled
// with tasks/get, each status and message reported, never sent again.
func TestTaskIsFollowedToItsResult(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		switch {
		case n < 3:
			return map[string]any{"status": "working", "statusMessage": "step " + string(rune('0'+n))}
		default:
			return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "job done"}}}}
		}
	}}
	tl, _ := taskTool(t, s)
	r, progress := run(context.Background(), t, tl)
	if r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "job done") || !strings.Contains(r.Output, "<untrusted-mcp-result") {
		t.Fatalf("%+v", r)
	}
	for _, want := range []string{"MCP task " + mcptest.TaskID + " started", "task working: queued", "task working: step 1", "task working: step 2", "task completed"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	if s.Calls.Load() != 1 || s.Gets.Load() != 3 {
		t.Errorf("calls %d, gets %d", s.Calls.Load(), s.Gets.Load())
	}
}

// A task that fails or is cancelled by the server ends the call failed
// with its reason.
func TestFailedTaskIsFailed(t *testing.T) {
	for _, tc := range []struct {
		state map[string]any
		want  string
	}{
		{map[string]any{"status": "failed", "error": map[string]any{"code": -32603, "message": "disk full"}}, "the task failed (code -32603): disk full"},
		{map[string]any{"status": "cancelled", "statusMessage": "operator stopped it"}, "the server cancelled the task: operator stopped it"},
		{map[string]any{"status": "exploded"}, `status "exploded", which kin does not know`},
	} {
		s := &mcptest.TaskServer{State: func(int, map[string]json.RawMessage) map[string]any { return tc.state }}
		tl, _ := taskTool(t, s)
		r, _ := run(context.Background(), t, tl)
		if r.Status != tool.StatusFailed || !strings.Contains(r.Output, tc.want) || !strings.Contains(r.Output, "ran as task "+mcptest.TaskID) {
			t.Errorf("%v: %+v", tc.state, r)
		}
		if s.Calls.Load() != 1 {
			t.Errorf("calls %d", s.Calls.Load())
		}
	}
}

// input_required goes through the same question path as any server
// question; the answer goes back with tasks/update, and the task goes on.
func TestTaskInputRequired(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, answers map[string]json.RawMessage) map[string]any {
		if a, ok := answers["confirm"]; ok {
			return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "confirmed " + string(a)}}}}
		}
		return map[string]any{"status": "input_required", "statusMessage": "needs a yes", "inputRequests": map[string]any{
			"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "go on?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
		}}
	}}
	tl, b := taskTool(t, s)
	var asked []string
	b.answer = func(p *mcp.ElicitParams) *mcp.ElicitResult {
		asked = append(asked, p.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}
	}
	r, _ := run(context.Background(), t, tl)
	if r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "confirmed") || !strings.Contains(r.Output, "ok") {
		t.Fatalf("%+v", r)
	}
	if len(asked) != 1 || asked[0] != "go on?" || s.Updates.Load() != 1 || s.Calls.Load() != 1 {
		t.Fatalf("asked %v, updates %d, calls %d", asked, s.Updates.Load(), s.Calls.Load())
	}

	// Declined: the task is cancelled, the call denied.
	s2 := &mcptest.TaskServer{State: s.State}
	tl2, b2 := taskTool(t, s2)
	b2.answer = func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }
	r, _ = run(context.Background(), t, tl2)
	if r.Status != tool.StatusDenied || s2.Cancels.Load() != 1 || s2.Updates.Load() != 0 {
		t.Fatalf("declined: %+v, cancels %d", r, s2.Cancels.Load())
	}
}

// Cancelling the turn sends tasks/cancel; the outcome is unknown (the
// server may have acted), and the call is never sent again.
func TestTurnCancelCancelsTheTask(t *testing.T) {
	s := &mcptest.TaskServer{State: func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	tl, _ := taskTool(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.Gets.Load() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	r, _ := run(ctx, t, tl)
	unknown(t, r, "kin asked the server to cancel the task")
	if s.Cancels.Load() != 1 || s.Calls.Load() != 1 {
		t.Fatalf("cancels %d, calls %d", s.Cancels.Load(), s.Calls.Load())
	}
}

// A connection lost mid-task keeps the task id and says the outcome is
// pending; nothing is sent again.
func TestLostConnectionMidTaskIsPending(t *testing.T) {
	s := &mcptest.TaskServer{State: func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	ts := mcptest.ServeHTTPHandler(t, s)
	b := dial(t, mcptest.HTTPConfig("tasks", ts.URL, nil))
	tl := tools(t, b, false)["job"]
	go func() {
		for s.Gets.Load() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		ts.Close()
	}()
	r, _ := run(context.Background(), t, tl)
	unknown(t, r, "it runs as task "+mcptest.TaskID+" on the server and its outcome is pending")
	if s.Calls.Load() != 1 {
		t.Fatalf("calls %d", s.Calls.Load())
	}
}

// The task is recorded (server, launch, id) before kin first polls it, so a kin
// that stops at any moment after can find it again; without a recorder
// the call says its outcome would be unknown after a restart.
func TestTaskIsRecordedBeforeTheFirstPoll(t *testing.T) {
	s := &mcptest.TaskServer{State: func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}}
	}}
	tl, b := taskTool(t, s)
	var rec []string
	ctx := tool.WithTaskRecorder(context.Background(), func(tk tool.Task) error {
		rec = append(rec, tk.Server+"/"+tk.Launch+"/"+tk.ID+"/gets="+string(rune('0'+s.Gets.Load())))
		return nil
	})
	r, progress := run(ctx, t, tl)
	if r.Status != tool.StatusCompleted || strings.Join(rec, ",") != "tasks/launch:"+b.id+"/"+mcptest.TaskID+"/gets=0" {
		t.Errorf("result %+v, recorded %v", r, rec)
	}
	if strings.Contains(progress, "could not record") {
		t.Errorf("progress %q", progress)
	}
	_, progress = run(context.Background(), t, tl)
	if !strings.Contains(progress, "kin could not record this task") {
		t.Errorf("without a recorder: %q", progress)
	}
}

// A task id longer than MaxTaskID is never recorded (a restart could not
// follow it): the call says so as it starts, and a kin that stops before
// the task ends leaves the call unknown (see rpc's
// TestResumedTaskWithAnIDTooLongIsUnknown). A task that ends while this
// kin follows it still gives its real result.
func TestTaskIDTooLongIsNotRecorded(t *testing.T) {
	s := &mcptest.TaskServer{ID: strings.Repeat("x", calltool.MaxTaskID+1), State: func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}}
	}}
	tl, _ := taskTool(t, s)
	recorded := 0
	ctx := tool.WithTaskRecorder(context.Background(), func(tool.Task) error { recorded++; return nil })
	r, progress := run(ctx, t, tl)
	if recorded != 0 {
		t.Errorf("an id of %d bytes was recorded", calltool.MaxTaskID+1)
	}
	if !strings.Contains(progress, "kin could not record this task: if kin stops before it ends, its outcome will be unknown") {
		t.Errorf("progress %q", progress)
	}
	if r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "ok") || s.Calls.Load() != 1 {
		t.Errorf("result %+v, calls %d", r, s.Calls.Load())
	}
	// MaxTaskID bytes exactly is recorded.
	s2 := &mcptest.TaskServer{ID: strings.Repeat("x", calltool.MaxTaskID), State: s.State}
	tl2, _ := taskTool(t, s2)
	recorded = 0
	if _, progress = run(ctx, t, tl2); recorded != 1 || strings.Contains(progress, "could not record") {
		t.Errorf("an id of %d bytes: recorded %d, progress %q", calltool.MaxTaskID, recorded, progress)
	}
}

// A task whose status message is a new 100 kB, many-line text at every
// poll reaches the editor as one short line per status, not as the text.
func TestTaskStatusMessageIsOneShortLine(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		if n < 4 {
			return map[string]any{"status": "working", "statusMessage": strings.Repeat(string(rune('a'+n))+"\n", 50000)}
		}
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}}
	}}
	tl, _ := taskTool(t, s)
	r, progress := run(context.Background(), t, tl)
	if r.Status != tool.StatusCompleted {
		t.Fatalf("%+v", r)
	}
	for _, l := range strings.Split(progress, "\n") {
		if len(l) > calltool.MaxStatusMessage+100 {
			t.Fatalf("a status line of %d bytes: %.200q", len(l), l)
		}
	}
	if len(progress) > 10*(calltool.MaxStatusMessage+100) || !strings.Contains(progress, "task working: b b b") {
		t.Fatalf("progress of %d bytes: %.300q", len(progress), progress)
	}
}

// A tasks/get answer about another task than the one asked for is refused:
// neither its status nor its result is taken (a server, or a proxy in
// front of it, answering with someone else's task would otherwise hand
// its result to the model as this call's), whether kin follows the task
// it just created or one it resumes after a restart. The outcome is
// unknown, the call never sent again.
func TestTaskAnswerNamingAnotherTaskIsRefused(t *testing.T) {
	s := &mcptest.TaskServer{State: func(n int, _ map[string]json.RawMessage) map[string]any {
		return map[string]any{"taskId": "task-of-someone-else", "status": "completed", "statusMessage": "forged status",
			"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "forged result"}}}}
	}}
	tl, b := taskTool(t, s)
	r, progress := run(context.Background(), t, tl)
	unknown(t, r, "it runs as task "+mcptest.TaskID+" on the server and its outcome is pending")
	for _, got := range []string{r.Output, progress} {
		if strings.Contains(got, "forged") || strings.Contains(got, "someone-else") {
			t.Errorf("the other task's answer was taken: %q", got)
		}
	}
	if !strings.Contains(r.Output, "another task") {
		t.Errorf("the refusal does not say why: %s", r.Output)
	}
	res := calltool.Resume(context.Background(), tool.Env{}, b, "job", mcptest.TaskID, nil)
	if res.Status != tool.StatusUnknown || strings.Contains(res.Output, "forged") || !strings.Contains(res.Output, "another task") {
		t.Errorf("resumed: %+v", res)
	}
	if s.Calls.Load() != 1 {
		t.Errorf("calls %d", s.Calls.Load())
	}
}
