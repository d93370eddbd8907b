package agent

import (
	"path/filepath"
	"sync"
	"testing"

	askpkg "github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/tool"
)

// cancelsSubagent plays a person who, asked about a spend limit by a
// subagent, cancels the subagent's session instead of answering; every
// later limit question is answered "continue".
type cancelsSubagent struct {
	gate *permission.Gate
	svc  *Service

	mu        sync.Mutex
	cancelled string
}

func (c *cancelsSubagent) Asked(q askpkg.Question) {
	r, ok := q.Body.(permission.Request)
	if !ok {
		return
	}
	c.mu.Lock()
	first := c.cancelled == "" && r.Kind == permission.KindLimit && r.Parent.SessionID != ""
	if first {
		c.cancelled = r.SessionID
	}
	c.mu.Unlock()
	if first {
		go c.svc.CancelTurn(r.SessionID)
		return
	}
	go c.gate.Respond(q.ID, permission.AllowOnce)
}

func (c *cancelsSubagent) Resolved(askpkg.Question, askpkg.Answer) {}

// The attack: a subagent stopped at a spend limit's question; the person
// cancelled the subagent's session ("cancelling a subagent's session
// stops only it, and the parent goes on"). The cancellation, returned by
// the limit check, was kept as the limit stop of the subagent's turn and
// of every turn it works for, so the parent's turn failed at its next
// request without asking anything. Only the subagent stops now.
func TestCancellingASubagentAtALimitLeavesItsParentGoing(t *testing.T) {
	home := t.TempDir()
	m := modeltest.New()
	t.Cleanup(m.Close)
	writeLimits(t, home, settings.Limits{TurnTokens: 2000})
	c := &cancelsSubagent{}
	c.gate = permission.NewGate(askpkg.New(c), mustGrants(t))
	rec := &screen{events: events{done: make(chan TurnDone, 8)}}
	svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
		Tools: tool.Static(builtin.Tools(builtin.Options{})), Events: rec, Gate: c.gate})
	t.Cleanup(svc.Shutdown)
	c.svc = svc
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n")
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "d1", Name: DelegateToolName, Arguments: `{"task":"read a.go"}`}}, Usage: modeltest.Usage{Input: 50, Output: 5}},
		modeltest.Reply{Calls: []modeltest.Call{{ID: "r1", Name: "read_file", Arguments: `{"path":"a.go"}`}}, Usage: modeltest.Usage{Input: 1500, Output: 100}},
		modeltest.Reply{Text: []string{"the parent goes on"}},
	)
	if _, err := svc.StartTurn(sid, TextInput("go"), nil); err != nil {
		t.Fatal(err)
	}
	var d TurnDone
	for d.SessionID != sid {
		d = waitDone(t, rec.events)
	}
	c.mu.Lock()
	child := c.cancelled
	c.mu.Unlock()
	if child == "" || child == sid {
		t.Fatalf("no subagent limit question was asked (child %q)", child)
	}
	if d.Status != TurnCompleted {
		t.Errorf("the parent's turn ended %s: %s", d.Status, d.Error)
	}
	if n := len(m.Requests()); n != 3 {
		t.Errorf("%d requests, want 3 (the subagent's second never sent)", n)
	}
}
