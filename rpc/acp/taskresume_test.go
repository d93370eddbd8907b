package acp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// crashedTask runs a call that becomes a task on a configured MCP server
// and returns the world with, as KIN_HOME, what a kin killed while it
// polled leaves: a copy of the home taken once the call shows working (the
// task record is durable before the first poll), so the session's log has
// the call and its task and no result. The first kin then goes away.
func crashedTask(t *testing.T, s *mcptest.TaskServer) (w *world, sid string) {
	t.Helper()
	w = newWorld(t)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"jobs": map[string]any{"type": "http", "url": mcptest.ServeHTTPHandler(t, s).URL}}})
	if err := os.WriteFile(filepath.Join(w.home, "mcp.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	c := w.connect(nil)
	c.initialize(nil)
	c.answer("allow_once") // the server's launch, then the call
	sid = c.newSession()
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "j1", Name: "mcp__jobs__job", Arguments: "{}"}}})
	// A long question: a load's replay of it takes a while, and a follow
	// that did not wait for the answer would report the call before the
	// replay reached it.
	question := "run the job\n" + strings.Repeat("0123456789abcdef ", 90_000)
	go c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text(question)}}, nil) // answered when the kin goes
	c.until("the call working", func() bool {
		for _, u := range c.updates("") {
			if u["toolCallId"] == "j1" && kinStatus(u) == "working" {
				return true
			}
		}
		return false
	})
	home := rpctest.Crashed(t, w.home)
	c.close()
	w.home = home
	return w, sid
}

func kinStatus(u map[string]any) string {
	m, _ := u["_meta"].(map[string]any)
	k, _ := m["kin"].(map[string]any)
	s, _ := k["status"].(string)
	return s
}

// opened splits the updates of call callID that kin sent after the
// client's request of method: those before its answer, and those after.
func opened(c *client, method, callID string) (before, after []map[string]any, answered bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	asked := false
	for _, f := range c.frames {
		switch {
		case f.Dir == "client" && f.Kind == "request" && f.Method == method:
			asked = true
		case !asked || f.Dir != "kin":
		case f.Kind == "response" && f.Method == method:
			answered = true
		case f.Method == NotifySessionUpdate:
			var n struct {
				Update map[string]any `json:"update"`
			}
			_ = json.Unmarshal(f.Params, &n)
			if n.Update["toolCallId"] != callID {
				continue
			}
			if answered {
				after = append(after, n.Update)
			} else {
				before = append(before, n.Update)
			}
		}
	}
	return before, after, answered
}

// kin is killed while a call runs as an MCP task, and the task ends
// meanwhile. The next kin's session/load (or session/resume) goes on
// following it, and the task ends at once: the call's updates (working,
// then completed with the task's result) all come after the answer, so
// after the load's replay of the call, and none is lost (an update sent
// before the session was remembered on the connection used to be
// dropped, and the client showed the call in progress for ever).
func TestAFollowedTaskIsReportedAfterTheSessionOpened(t *testing.T) {
	for _, method := range []string{MethodSessionLoad, MethodSessionResume} {
		t.Run(method, func(t *testing.T) {
			var finish atomic.Bool
			s := &mcptest.TaskServer{State: mcptest.WorkingUntil(&finish, "indexing", "indexed 2 files")}
			w, sid := crashedTask(t, s)
			finish.Store(true)

			c := w.connect(nil)
			c.initialize(nil)
			c.answer("allow_once")
			// No prompt first: kin acp starts the configured servers at a
			// session's first prompt, and once a load or resume is answered
			// when it goes on following a task (the follow waits for its
			// server).
			c.call(method, map[string]any{"sessionId": sid, "cwd": w.ws, "mcpServers": []any{}}, nil)
			c.until("the call's final update", func() bool {
				_, after, _ := opened(c, method, "j1")
				return len(after) > 0 && final(kinStatus(after[len(after)-1]))
			})

			before, after, _ := opened(c, method, "j1")
			replayed := method == MethodSessionLoad
			switch {
			case replayed && (len(before) != 1 || before[0]["sessionUpdate"] != UpdateToolCall || kinStatus(before[0]) != "working"):
				t.Fatalf("before the answer, want the replay's working tool_call alone: %v", before)
			case !replayed && len(before) != 0:
				t.Fatalf("updates of the call before the answer: %v", before)
			}
			// The follow reports the call working (a tool_call when the
			// client has not seen it), then its end.
			first := UpdateToolCall
			if replayed {
				first = UpdateToolCallUpdate
			}
			if len(after) < 2 || after[0]["sessionUpdate"] != first || kinStatus(after[0]) != "working" || after[0]["status"] != StatusInProgress {
				t.Fatalf("after the answer, want the call first reported working by a %s: %v", first, after)
			}
			for _, u := range after[1:] {
				if u["sessionUpdate"] != UpdateToolCallUpdate {
					t.Errorf("a second first report of the call: %v", u)
				}
			}
			end := after[len(after)-1]
			if end["status"] != StatusCompleted || !strings.Contains(fmt.Sprint(end["content"]), "indexed 2 files") {
				t.Errorf("the call ended %v", end)
			}
			if s.Calls.Load() != 1 {
				t.Errorf("the server saw %d calls; the task must be polled, never the call sent again", s.Calls.Load())
			}
		})
	}
}
