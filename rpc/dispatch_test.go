package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// While one request is stuck, every request that does not have to follow it
// is read and answered; one that does follow it (same ordering key) waits,
// and can be cancelled while it waits without running. The stuck request is
// a grants/revoke waiting for grants.json's lock, which the test holds as
// another kin would.
func TestNothingWaitsBehindAStuckRequest(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.Home, "grants.json")
	g, err := permission.LoadGrants(path)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := g.Add("", tool.Grant{Key: "tool:write_file", Label: "write_file"}, true)
	if err != nil {
		t.Fatal(err)
	}
	locked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	go lockedfile.Update(path, func([]byte, bool) ([]byte, error) { close(locked); <-release; return nil, nil })
	<-locked
	ed := rpctest.Start(t, e.Options())
	t.Cleanup(unblock) // before the editor's cleanup, which waits for the server
	ed.Initialize(e.WS)

	stuck := send(t, ed, "grants/revoke", rpc.GrantIDParams{ID: "p_missing"})
	// A revoke must follow the one it was sent after: it waits.
	second := send(t, ed, "grants/revoke", rpc.GrantIDParams{ID: kept.ID}, jsonrpc2.PickID(jsonrpc2.ID{Num: 4242}))

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

	// The waiting revoke is cancelled before it ran: -32800 now, and it never runs.
	ed.Notify("$/cancelRequest", map[string]any{"id": 4242})
	if err := reply(second, nil); !isCode(err, rpc.CodeRequestCancelled) {
		t.Fatalf("cancelled grants/revoke: %v, want -32800", err)
	}
	unblock()
	if err := reply(stuck, nil); !isCode(err, rpc.CodeNotFound) {
		t.Fatalf("grants/revoke of no grant: %v, want -32013", err)
	}
	var list rpc.GrantsListResult
	ed.MustCall("grants/list", nil, &list) // the key is free again
	found := false
	for _, x := range list.Grants {
		found = found || x.ID == kept.ID
	}
	if !found {
		t.Errorf("the cancelled revoke ran: %+v", list.Grants)
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

// reply waits for a dispatched request's answer (bounded by rpctest.Timeout).
func reply(w jsonrpc2.Waiter, out any) error {
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
		if err := reply(first, &t1); err != nil {
			t.Fatalf("first turn/start: %v", err)
		}
		if err := reply(cancel, &c); err != nil || !c.Cancelled {
			t.Fatalf("turn/cancel behind turn/start: %v %+v", err, c)
		}
		if err := reply(second, &t2); err != nil {
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
		if err := reply(send(t, ed, "turn/start", rpc.TurnStartParams{SessionID: sid, Input: "go"}, jsonrpc2.PickID(startID)), &res); err != nil {
			t.Fatal(err)
		}
		ed.Wait("turn/delta", rpctest.Field("turnId", res.TurnID))
		if err := reply(send(t, ed, "turn/cancel", rpc.SessionIDParams{SessionID: sid}, jsonrpc2.PickID(cancelID)), nil); err != nil {
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
