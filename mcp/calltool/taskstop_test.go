package calltool_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// kin stopping (tool.ErrStopping) while a call runs as a task it recorded
// leaves the task running: no tasks/cancel, the call Open (no result to
// record). A task it could not record is cancelled as before: nothing
// could follow it again.
func TestKinStoppingLeavesARecordedTaskRunning(t *testing.T) {
	working := func(int, map[string]json.RawMessage) map[string]any { return map[string]any{"status": "working"} }
	for _, recorded := range []bool{true, false} {
		s := &mcptest.TaskServer{State: working}
		tl, _ := taskTool(t, s)
		ctx, stop := context.WithCancelCause(context.Background())
		if recorded {
			ctx = tool.WithTaskRecorder(ctx, func(tool.Task) error { return nil })
		}
		go func() {
			for s.Gets.Load() < 2 {
				time.Sleep(5 * time.Millisecond)
			}
			stop(tool.ErrStopping)
		}()
		r, _ := run(ctx, t, tl)
		want := int64(0)
		if !recorded {
			want = 1
		}
		if r.Open != recorded || r.Status != tool.StatusUnknown || s.Cancels.Load() != want || s.Calls.Load() != 1 {
			t.Errorf("recorded %v: open %v, status %s, cancels %d, calls %d", recorded, r.Open, r.Status, s.Cancels.Load(), s.Calls.Load())
		}
	}
}

// A task's question withdrawn because kin began to stop (the editor went
// away: the broker refuses what is pending before the turns are
// cancelled) is not the person declining: the task is left running. The
// same refusal while kin runs on is a decline, and cancels it.
func TestAQuestionWithdrawnAsKinStopsLeavesTheTask(t *testing.T) {
	asks := func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "input_required", "inputRequests": map[string]any{
			"confirm": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "go on?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
		}}
	}
	for _, stopping := range []bool{true, false} {
		s := &mcptest.TaskServer{State: asks}
		tl, b := taskTool(t, s)
		var flag atomic.Bool
		b.answer = func(*mcp.ElicitParams) *mcp.ElicitResult {
			flag.Store(stopping)
			return &mcp.ElicitResult{Action: "cancel"}
		}
		ctx := tool.WithTaskRecorder(context.Background(), func(tool.Task) error { return nil })
		ctx = tool.WithStopping(ctx, flag.Load)
		r, _ := run(ctx, t, tl)
		want := int64(1)
		if stopping {
			want = 0
		}
		if r.Open != stopping || s.Cancels.Load() != want {
			t.Errorf("stopping %v: open %v, status %s, cancels %d", stopping, r.Open, r.Status, s.Cancels.Load())
		}
	}
}
