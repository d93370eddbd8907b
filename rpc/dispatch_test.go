package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// stuckMCP is a manager whose List blocks until released: a request that
// never finishes, to see what waits behind it.
type stuckMCP struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
	edits   atomic.Int32
}

func (m *stuckMCP) unblock() { m.once.Do(func() { close(m.release) }) }

func newStuckMCP() *stuckMCP {
	return &stuckMCP{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (m *stuckMCP) Tools() []tool.Tool    { return nil }
func (m *stuckMCP) Start(context.Context) {}
func (m *stuckMCP) List() any {
	m.entered <- struct{}{}
	<-m.release
	return map[string]any{"servers": []any{}}
}
func (m *stuckMCP) Edit(context.Context, rpc.MCPEdit) error    { m.edits.Add(1); return nil }
func (m *stuckMCP) Apply(context.Context) (any, error)         { return nil, nil }
func (m *stuckMCP) Check(context.Context, string) (any, error) { return nil, nil }
func (m *stuckMCP) Login(context.Context, string) (any, error) { return nil, nil }
func (m *stuckMCP) TrustGrants() []permission.Grant            { return nil }
func (m *stuckMCP) RevokeTrust(string) (bool, error)           { return false, nil }
func (m *stuckMCP) Close()                                     {}

func withMCP(e *env, m rpc.MCP) rpc.Options {
	opts := e.Options()
	opts.MCP = func([]string, rpc.MCPHost) rpc.MCP { return m }
	return opts
}

// While one request is stuck, every request that does not have to follow it
// is read and answered; one that does follow it (same ordering key) waits,
// and can be cancelled while it waits without running.
func TestNothingWaitsBehindAStuckRequest(t *testing.T) {
	e := newEnv(t)
	m := newStuckMCP()
	ed := rpctest.Start(t, withMCP(e, m))
	t.Cleanup(func() { m.unblock() }) // before the editor's cleanup, which waits for the server
	ed.Initialize(e.WS)

	list := send(t, ed, "mcp/list", nil)
	<-m.entered
	// An edit must follow the list it was sent after: it waits.
	add := send(t, ed, "mcp/add", map[string]any{"name": "x", "config": map[string]any{"command": "x"}}, jsonrpc2.PickID(jsonrpc2.ID{Num: 4242}))

	// Everything else goes on: sessions, turns, approvals.
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(modeltest.Reply{Text: []string{"still ", "serving"}, Hold: hold})
	var s rpc.SessionResult
	ed.MustCall("session/new", nil, &s)
	var sessions rpc.SessionListResult
	ed.MustCall("session/list", nil, &sessions)
	tid := start(t, ed, s.Session.SessionID, "are you there?")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	var c rpc.TurnCancelResult
	ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: s.Session.SessionID}, &c)
	if !c.Cancelled {
		t.Error("turn/cancel found no turn")
	}
	if code, _ := ed.CallErr("approval/respond", rpc.ApprovalRespondParams{RequestID: "ap_404", Decision: "deny"}); code != rpc.CodeNotFound {
		t.Errorf("approval/respond: code %d", code)
	}

	// The waiting edit is cancelled before it ran: -32800 now, and it never runs.
	ed.Notify("$/cancelRequest", map[string]any{"id": 4242})
	if err := answer(add, nil); !isCode(err, rpc.CodeRequestCancelled) {
		t.Fatalf("cancelled mcp/add: %v, want -32800", err)
	}
	m.unblock()
	if err := answer(list, nil); err != nil {
		t.Fatalf("mcp/list: %v", err)
	}
	ed.MustCall("mcp/list", nil, nil) // the key is free again
	if n := m.edits.Load(); n != 0 {
		t.Errorf("the cancelled edit ran %d times", n)
	}
}

// send dispatches a request without waiting for its answer; it fails the
// test when kin does not even read it.
func send(t *testing.T, ed *rpctest.Editor, method string, params any, opts ...jsonrpc2.CallOption) jsonrpc2.Waiter {
	t.Helper()
	type sent struct {
		w   jsonrpc2.Waiter
		err error
	}
	ch := make(chan sent, 1)
	go func() {
		w, err := ed.Conn.DispatchCall(context.Background(), method, params, opts...)
		ch <- sent{w, err}
	}()
	select {
	case s := <-ch:
		if s.err != nil {
			t.Fatalf("%s: %v", method, s.err)
		}
		return s.w
	case <-time.After(rpctest.Timeout):
		t.Fatalf("kin did not read %s: its read loop is stuck", method)
	}
	return jsonrpc2.Waiter{}
}

// answer waits for a dispatched request's answer (bounded by rpctest.Timeout).
func answer(w jsonrpc2.Waiter, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), rpctest.Timeout)
	defer cancel()
	return w.Wait(ctx, out)
}

func isCode(err error, code int64) bool {
	re, ok := err.(*jsonrpc2.Error)
	return ok && re.Code == code
}

// Requests naming one session are handled in the order they were sent, even
// when the editor does not wait for the answers: a turn/cancel sent right
// behind turn/start stops that turn, and a turn/start right behind the
// cancel starts the next one (it waits for the cancelled turn to end
// rather than being refused as busy).
func TestRequestsOnOneSessionKeepTheirOrder(t *testing.T) {
	e := newEnv(t)
	ed, sid := e.editor()
	// The first turn may be cancelled before or after it asked the model:
	// its answer would take a minute, the second's comes at once.
	e.Model.SetRules([]modeltest.Rule{
		{WhenUser: "first", Reply: modeltest.ReplyJSON{Text: modeltest.Deltas{"never", "shown"}, DelayMs: 60_000}},
		{WhenUser: "second", Reply: modeltest.ReplyJSON{Text: modeltest.Deltas{"next"}}},
	})
	for i := range 10 {
		first := send(t, ed, "turn/start", rpc.TurnStartParams{SessionID: sid, Input: fmt.Sprint("first ", i)})
		cancel := send(t, ed, "turn/cancel", rpc.SessionIDParams{SessionID: sid})
		second := send(t, ed, "turn/start", rpc.TurnStartParams{SessionID: sid, Input: fmt.Sprint("second ", i)})
		var t1, t2 rpc.TurnStartResult
		var c rpc.TurnCancelResult
		if err := answer(first, &t1); err != nil {
			t.Fatalf("first turn/start: %v", err)
		}
		if err := answer(cancel, &c); err != nil || !c.Cancelled {
			t.Fatalf("turn/cancel behind turn/start: %v %+v", err, c)
		}
		if err := answer(second, &t2); err != nil {
			t.Fatalf("turn/start behind turn/cancel: %v", err)
		}
		if done := completed(ed, t1.TurnID); done["status"] != "cancelled" {
			t.Fatalf("first turn: %v", done)
		}
		if done := completed(ed, t2.TurnID); done["status"] != "completed" {
			t.Fatalf("second turn: %v", done)
		}
	}
}

// An editor learns a turnId from turn/start's answer before any
// notification names it, and turn/cancel's answer before the turn's
// turn/completed.
func TestTurnRepliesComeBeforeTheirNotifications(t *testing.T) {
	e := newEnv(t)
	ed, sid := e.editor()
	for i := range 30 {
		hold := make(chan struct{})
		e.Model.Script(modeltest.Reply{Text: []string{"a", "b"}, Hold: hold})
		startID := jsonrpc2.ID{Num: uint64(1000 + 2*i)}
		cancelID := jsonrpc2.ID{Num: uint64(1001 + 2*i)}
		var res rpc.TurnStartResult
		if err := answer(send(t, ed, "turn/start", rpc.TurnStartParams{SessionID: sid, Input: "go"}, jsonrpc2.PickID(startID)), &res); err != nil {
			t.Fatal(err)
		}
		ed.Wait("turn/delta", rpctest.Field("turnId", res.TurnID))
		if err := answer(send(t, ed, "turn/cancel", rpc.SessionIDParams{SessionID: sid}, jsonrpc2.PickID(cancelID)), nil); err != nil {
			t.Fatal(err)
		}
		completed(ed, res.TurnID)
		close(hold)

		at := map[string]int{} // where each answer and notification came
		for n, f := range ed.Wire() {
			var m struct {
				ID     *json.RawMessage `json:"id"`
				Method string           `json:"method"`
				Params struct {
					TurnID string `json:"turnId"`
				} `json:"params"`
			}
			if f.From != "kin" || json.Unmarshal(f.Msg, &m) != nil {
				continue
			}
			switch {
			case m.Method == "" && m.ID != nil:
				at["#"+string(*m.ID)] = n
			case m.Params.TurnID == res.TurnID:
				if _, seen := at[m.Method]; !seen {
					at[m.Method] = n
				}
			}
		}
		if at["#"+startID.String()] > at["turn/started"] {
			t.Fatalf("turn %d: turn/started came before the answer to turn/start", i)
		}
		if at["#"+cancelID.String()] > at["turn/completed"] {
			t.Fatalf("turn %d: turn/completed came before the answer to turn/cancel", i)
		}
	}
}
