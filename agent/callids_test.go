package agent

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
)

// callLog keeps each call's id as the editor was shown it.
type callLog struct {
	*screen
	mu  sync.Mutex
	ids map[string][]string // call id -> arguments of the calls shown pending with it
}

func (c *callLog) ToolCall(e ToolCall) {
	c.screen.ToolCall(e)
	if e.Status != CallPending {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids[e.CallID] = append(c.ids[e.CallID], e.Arguments)
}

// Attack: a service names two calls of one answer with the same call id
// (and reuses it in the next turn). Each call is its own call to the
// editor and to the model: its own id, its output paired with it. Before,
// the editor was shown the second call as an update of the first, and the
// model was sent two calls c1 and two outputs c1, with nothing saying
// which output answered which call.
func TestACallIDTheServiceRepeatsIsMadeUnique(t *testing.T) {
	svc, m, rec, ws := flowService(t, model.Config{})
	log := &callLog{screen: rec, ids: map[string][]string{}}
	svc.opts.Events = log
	writeFile(t, filepath.Join(ws, "a.txt"), "alpha\n")
	writeFile(t, filepath.Join(ws, "b.txt"), "bravo\n")
	s, _ := svc.NewSession(SessionOptions{Roots: []string{ws}})
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`},
			{ID: "c1", Name: "read_file", Arguments: `{"path":"b.txt"}`}}},
		modeltest.Reply{Text: []string{"read both"}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}},
		modeltest.Reply{Text: []string{"again"}},
	)
	for i := range 2 {
		if d := ask(t, svc, rec, s.Info.SessionID, TextInput("read")); d.Status != TurnCompleted {
			t.Fatalf("turn %d: %+v", i, d)
		}
	}
	log.mu.Lock()
	for id, args := range log.ids {
		if len(args) != 1 {
			t.Errorf("the editor was shown %d calls with the id %s: %v", len(args), id, args)
		}
	}
	if len(log.ids) != 3 {
		t.Errorf("the editor was shown %d call ids, want 3: %v", len(log.ids), log.ids)
	}
	log.mu.Unlock()
	// The last request holds three calls, each id once, each output after
	// its call and answering it.
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	args := map[string]string{}
	outs := map[string]string{}
	for _, it := range last.Input {
		id, _ := it["call_id"].(string)
		switch it["type"] {
		case "function_call":
			if _, dup := args[id]; dup {
				t.Errorf("call id %s sent twice", id)
			}
			args[id], _ = it["arguments"].(string)
		case "function_call_output":
			if _, dup := outs[id]; dup {
				t.Errorf("output for %s sent twice", id)
			}
			outs[id], _ = it["output"].(string)
		}
	}
	if len(args) != 3 || len(outs) != 3 {
		t.Fatalf("calls %v outputs %v", args, outs)
	}
	for id, a := range args {
		want := "alpha"
		if strings.Contains(a, "b.txt") {
			want = "bravo"
		}
		if !strings.Contains(outs[id], want) {
			t.Errorf("call %s (%s) is answered by %q", id, a, outs[id])
		}
	}
}
