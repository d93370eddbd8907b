package chat_test

import (
	"strings"
	"testing"
)

// A call an MCP server runs as a task shows "working" with each new status
// message of the task, on a line of its own; the server's text cannot
// drive the terminal.
func TestWorkingCallShowsTaskStatus(t *testing.T) {
	f, conn := newFake(t)
	s := run(t, conn, true, nil)
	f.waitCall("initialized", 1)
	s.send("run the job")
	f.waitCall("turn/start", 1)
	call := map[string]any{"sessionId": "s_fake", "turnId": "t_1", "callId": "j1", "name": "mcp__jobs__job", "kind": "other", "title": "Call job on jobs", "arguments": "{}"}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range call {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	f.notify("turn/toolCall", with(map[string]any{"status": "working", "statusMessage": "task working: indexing 1/2"}))
	f.notify("turn/toolCall", with(map[string]any{"status": "working", "statusMessage": "task working: indexing 1/2"}))
	f.notify("turn/toolCall", with(map[string]any{"status": "working", "statusMessage": "task working: \x1b[2Jindexing 2/2"}))
	f.notify("turn/toolCall", with(map[string]any{"status": "completed", "output": "indexed"}))
	out := s.out.waitFor(t, "… completed")
	if strings.Count(out, "indexing 1/2") != 1 || !strings.Contains(out, "mcp__jobs__job: Call job on jobs … working: task working: indexing 1/2") {
		t.Errorf("working lines:\n%s", out)
	}
	if strings.Contains(out, "\x1b[2J") {
		t.Errorf("the server's text drives the terminal:\n%q", out)
	}
	s.send("/quit")
	s.wait()
}
