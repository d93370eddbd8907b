package acp

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A client that reloads (session/load) while a subagent's approval waits
// is asked it again, in the session it prompted, as it is for the
// session's own calls. The broker keeps a subagent's question under the
// subagent's session id (its parent's beside it), and session/load asked
// again only the questions of the loaded session's own id: the subagent's
// was never shown again and its turn waited until cancelled.
func TestLoadAsksAgainASubagentsPendingApproval(t *testing.T) {
	w := newWorld(t)
	const question, task = "write notes", "Write notes.txt."
	w.model.Route(modeltest.FirstUser(task),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c_write", Name: "write_file", Arguments: `{"path":"notes.txt","content":"n\n"}`}}},
		modeltest.Reply{Text: []string{"notes.txt written."}})
	w.model.Route(modeltest.FirstUser(question),
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_d", Name: "delegate", Arguments: `{"task":"` + task + `","mode":"agent"}`}}},
		modeltest.Reply{Text: []string{"Done."}})
	c := w.connect(nil)
	c.initialize(nil)
	asked := make(chan RequestPermissionRequest, 4)
	var n atomic.Int32
	c.on(MethodRequestPermission, func(p json.RawMessage) (any, error) {
		var r RequestPermissionRequest
		_ = json.Unmarshal(p, &r)
		asked <- r
		if n.Add(1) == 1 {
			select {} // never answered: the client reloads
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	})
	sid := c.newSession()
	done := c.promptAsync(sid, text(question))
	<-asked
	c.call(MethodSessionLoad, LoadSessionRequest{SessionID: sid, Cwd: w.ws, MCPServers: []MCPServer{}}, nil)
	select {
	case r := <-asked:
		if r.SessionID != sid {
			t.Errorf("asked again in session %q, not the one the client prompted (%q)", r.SessionID, sid)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the subagent's approval was not asked again after session/load")
	}
	select {
	case res := <-done.res:
		if res.StopReason != StopEndTurn {
			t.Errorf("stopReason %q", res.StopReason)
		}
	case err := <-done.err:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("the prompt did not end")
	}
}
