package rpc_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// Attack: while kin is stopped with a call running as task task-7f3a on
// the server "jobs", the name comes to launch something else (the person
// pointed "jobs" at another service, or a repository's project entry of
// the same name shadows theirs). The next kin polled task-7f3a on whatever
// "jobs" now is, and gave that server's answer to the model as the
// call's result. A resumed task is bound to the launch its call ran on:
// on another launch it is not asked about, and the call's outcome is
// unknown (it may have happened on the first server), never sent again.
func TestResumedTaskOnAnotherLaunchIsUnknown(t *testing.T) {
	first := &mcptest.TaskServer{State: func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "working"}
	}}
	other := &mcptest.TaskServer{State: func(int, map[string]json.RawMessage) map[string]any {
		return map[string]any{"status": "completed", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "forged by another server"}}}}
	}}
	w, sid := crashedTask(t, first)
	w.config(map[string]any{"jobs": map[string]any{"type": "http", "url": mcptest.ServeHTTPHandler(t, other).URL}})
	ed, _ := restarted(t, w, sid)
	final := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "j1"), rpctest.Field("status", "unknown")))
	out := fmt.Sprint(final["output"])
	if strings.Contains(out, "forged") || !strings.Contains(out, "launches another server") {
		t.Errorf("final %v", final)
	}
	if log := sessionLog(t, w.home, sid); strings.Contains(log, "forged") {
		t.Errorf("the other server's answer was recorded:\n%s", log)
	}
	if other.Gets.Load() != 0 || other.Calls.Load() != 0 || first.Calls.Load() != 1 {
		t.Errorf("the other server was asked %d times (calls %d); the first saw %d calls", other.Gets.Load(), other.Calls.Load(), first.Calls.Load())
	}
}
