package rpc

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// How requests are dispatched (kin serve's and kin acp's alike: both use a
// Dispatcher).
//
// jsonrpc2 calls Handle inline in its read loop: while a handler runs, no
// later message is even read. So only initialize, which every later message
// depends on, runs there (shutdown marks the state there and runs off it),
// and nothing the loop does writes to the editor (see Handle). Every other
// request runs on its own goroutine, and the loop goes on reading at once:
// a turn/cancel or an approval/respond is never stuck behind a slow
// session/list, a session/resume of a long history or a turn/start.
//
// Off the loop, order is kept where it matters: requests that share an
// ordering key (route.order) run one after the other, in the order they
// arrived. Requests on the same session share its key (turn/start then
// turn/cancel never swap); MCP manager requests share one key (an edit then
// mcp/apply sees the edit), grants another. Requests with different keys, or
// none, run at once and may be answered in any order, as JSON-RPC allows.
//
// Running at once is not enough on a machine with two processors: a
// session/list and a session/resume decoding thousands of records would
// take both, and the goroutine reading the next message would wait for the
// scheduler to preempt one (10 ms and more). So bulk reads share all
// processors but one (route.bulk), and a person's turn/cancel is read and
// answered in well under a millisecond whatever the editor asked before it.

// Ordering returns a request's ordering key from its params ("": none).
type Ordering func(params json.RawMessage) string

// BySession orders requests naming the same sessionId.
func BySession(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p) // bad params are the handler's to report
	return SessionKey(p.SessionID)
}

// SessionKey is the ordering key of a session's requests.
func SessionKey(id string) string { return "session " + id }

// InGroup orders every request of a group.
func InGroup(name string) Ordering {
	return func(json.RawMessage) string { return name }
}

// sequencer lets requests that share a key run in arrival order.
type sequencer struct {
	// mu guards tail: per key, the done channel of the last request
	// that entered.
	mu   sync.Mutex
	tail map[string]chan struct{}
}

// enter is called in arrival order (on the read loop). It returns a channel
// closed once every earlier request with the same key is done, and done,
// which the request calls (once) when later ones may run.
func (q *sequencer) enter(key string) (wait <-chan struct{}, done func()) {
	mine := make(chan struct{})
	if key == "" {
		close(mine)
		return mine, func() {}
	}
	q.mu.Lock()
	if q.tail == nil {
		q.tail = map[string]chan struct{}{}
	}
	prev, ok := q.tail[key]
	q.tail[key] = mine
	q.mu.Unlock()
	if !ok {
		prev = make(chan struct{})
		close(prev)
	}
	var once sync.Once
	return prev, func() {
		once.Do(func() {
			close(mine)
			q.mu.Lock()
			if q.tail[key] == mine {
				delete(q.tail, key) // nothing waits on it: forget the key
			}
			q.mu.Unlock()
		})
	}
}

// inflight is one request dispatched off the read loop.
type inflight struct {
	// ctx ends on a cancel request or teardown.
	ctx    context.Context
	cancel context.CancelFunc
}

// Route says how one method's requests run off the read loop.
type Route struct {
	Handle func(ctx context.Context, params json.RawMessage) (any, error)
	// Order, when set, gives the key of the requests this one must follow
	// in arrival order (BySession, InGroup).
	Order Ordering
	// StartsInOrder requests wait for the earlier ones of their key but
	// not the later ones for them: they may wait minutes for the person,
	// a server or a model (mcp/apply, an ACP prompt).
	StartsInOrder bool
	// Cancellable requests stop when a cancel request (or teardown) ends
	// their context, and are answered -32800: they only read, or undo
	// nothing half done by stopping. Any request is cancelled while it
	// still waits for its turn.
	Cancellable bool
	// AnswersCancel requests get the context a cancel request ends, as
	// Cancellable ones do, but answer for themselves how it ended them (an
	// ACP prompt: stopReason cancelled, which the schema allows as well
	// as -32800).
	AnswersCancel bool
	// Before names the notification that the handler holds (Hold) until
	// this request's reply is written.
	Before string
	// Bulk requests read a lot (every session, a whole history). They
	// share GOMAXPROCS-1 workers (at least one), so however many a client
	// sends, a processor stays free for the read loop and the requests a
	// person waits on.
	Bulk bool
}

// Dispatcher runs requests off the read loop by the rules above.
type Dispatcher struct {
	reply     func(id jsonrpc2.ID, res any, err error)
	closedErr *jsonrpc2.Error

	// base is the parent of every request's context; Stop ends it.
	base context.Context
	stop context.CancelFunc
	// order keeps requests that share an ordering key in arrival order;
	// running counts the requests dispatched; bulk holds a token per
	// bulk request running.
	order   sequencer
	running sync.WaitGroup
	bulk    chan struct{}

	// mu guards closed, inflight and holds.
	mu       sync.Mutex
	closed   bool
	inflight map[jsonrpc2.ID]*inflight
	holds    map[string]chan struct{} // see Hold
}

// NewDispatcher returns a dispatcher that answers through reply (called
// off the read loop, once per request) and refuses requests with
// closedErr once it is closed.
func NewDispatcher(reply func(id jsonrpc2.ID, res any, err error), closedErr *jsonrpc2.Error) *Dispatcher {
	d := &Dispatcher{reply: reply, closedErr: closedErr, bulk: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1)),
		inflight: map[jsonrpc2.ID]*inflight{}, holds: map[string]chan struct{}{}}
	d.base, d.stop = context.WithCancel(context.Background())
	return d
}

// Base is the context every request's derives from; it ends with Stop.
func (d *Dispatcher) Base() context.Context { return d.base }

// Refuse makes every later request answer the closed error; those
// dispatched before it go on (see run).
func (d *Dispatcher) Refuse() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

// Stop refuses later requests and ends every request's context: one
// still waiting behind an earlier one of its key, or cancellable, stops
// and is answered the closed error; any other runs to its end.
func (d *Dispatcher) Stop() {
	d.Refuse()
	d.stop()
}

// Wait returns once every dispatched request is answered.
func (d *Dispatcher) Wait() { d.running.Wait() }

// Dispatch runs a request off the read loop. It is called on the loop, in
// arrival order, and returns at once.
func (d *Dispatcher) Dispatch(id jsonrpc2.ID, r Route, params json.RawMessage) {
	key := ""
	if r.Order != nil {
		key = r.Order(params)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		go d.reply(id, nil, d.closedErr)
		return
	}
	if d.inflight[id] != nil {
		// JSON-RPC: an id is unique among the requests not yet answered.
		// Taking this one would leave the peer two answers with one id and
		// make a cancel request for it reach this one, not the first: it
		// is refused, and the first keeps its id.
		d.mu.Unlock()
		go d.reply(id, nil, errDuplicateID)
		return
	}
	req := &inflight{}
	req.ctx, req.cancel = context.WithCancel(d.base)
	d.inflight[id] = req
	d.running.Add(1) // under mu, so never after Wait began
	d.mu.Unlock()
	wait, done := d.order.enter(key)
	// answer frees the id before the answer is sent: a peer that reads it
	// may send its next request with the same id at once.
	answer := func(res any, err error) {
		d.mu.Lock()
		delete(d.inflight, id)
		d.mu.Unlock()
		req.cancel()
		d.reply(id, res, err)
	}

	go func() {
		defer d.running.Done()
		defer done()
		// A request with nothing before it on its key has come to run: a
		// cancel or teardown that ends its context before its goroutine
		// is scheduled finds it running, not waiting (select would pick
		// either at random).
		select {
		case <-wait:
		default:
			select {
			case <-wait:
			case <-req.ctx.Done():
				// Cancelled before it ran: nothing was done, so say so
				// now, but keep later requests of its key behind the
				// earlier ones.
				answer(nil, d.cancelledErr())
				<-wait
				return
			}
		}
		if r.StartsInOrder {
			done() // it waited for the earlier ones; later ones need not wait for it
		}
		res, err := d.run(req, r, params)
		answer(res, err)
		if r.Before != "" {
			d.Release(key, r.Before)
		}
	}()
}

// run calls the handler once the request's turn has come.
func (d *Dispatcher) run(req *inflight, r Route, params json.RawMessage) (any, error) {
	if r.Bulk {
		select {
		case d.bulk <- struct{}{}:
			defer func() { <-d.bulk }()
		case <-req.ctx.Done():
			return nil, d.cancelledErr()
		}
	}
	// Its turn has come: it runs, though shutdown (Refuse) or teardown
	// (Stop) came since it arrived; only one that can stop cleanly is
	// stopped now. Shutdown refuses the requests that arrive after it,
	// in Dispatch: one the editor sent before it (a grants/revoke as the
	// person closes the editor) is done, not refused.
	if r.Cancellable && req.ctx.Err() != nil {
		return nil, d.cancelledErr()
	}
	// A request that changes things runs to its end once started and
	// answers with what it did; only one that can stop cleanly gets the
	// context that a cancel request ends.
	ctx := d.base
	if r.Cancellable || r.AnswersCancel {
		ctx = req.ctx
	}
	res, err := r.Handle(ctx, params)
	if r.Cancellable && req.ctx.Err() != nil {
		return nil, errCancelled // by a cancel request, or by teardown
	}
	return res, err
}

var errCancelled = &jsonrpc2.Error{Code: CodeRequestCancelled, Message: "request cancelled"}

var errDuplicateID = &jsonrpc2.Error{Code: CodeInvalidRequest,
	Message: "invalid request: this id is the id of a request not yet answered; ids must be unique among pending requests"}

// cancelledErr is the answer to a request stopped before it ran: cancelled,
// or refused because the connection closed meanwhile.
func (d *Dispatcher) cancelledErr() *jsonrpc2.Error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return d.closedErr
	}
	return errCancelled
}

// Cancel ends a request's context ($/cancelRequest, ACP's
// $/cancel_request). A request still waiting for its turn is answered
// -32800 at once; a running one only if it is cancellable.
func (d *Dispatcher) Cancel(id jsonrpc2.ID) {
	d.mu.Lock()
	req := d.inflight[id]
	d.mu.Unlock()
	if req != nil {
		req.cancel()
	}
}

// Hold makes the next notification of method on key wait until Release,
// which the dispatcher calls once the request's reply is written
// (Route.Before): a client learns a turnId from turn/start's answer before
// any notification names it, and turn/cancel's answer before the turn's
// end. The handler takes the hold; it must not then wait for what sends
// the held notification. Requests on one key run one at a time, so a key
// holds at most one notification of each method.
func (d *Dispatcher) Hold(key, method string) {
	d.mu.Lock()
	d.holds[key+" "+method] = make(chan struct{})
	d.mu.Unlock()
}

// Release ends a Hold.
func (d *Dispatcher) Release(key, method string) {
	d.mu.Lock()
	ch := d.holds[key+" "+method]
	delete(d.holds, key+" "+method)
	d.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// AwaitReply blocks while a request on key holds method (see Hold).
func (d *Dispatcher) AwaitReply(key, method string) {
	d.mu.Lock()
	ch := d.holds[key+" "+method]
	d.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// kin serve's side.

var errShutDown = &jsonrpc2.Error{Code: CodeInvalidRequest, Message: "kin: the server is shut down; send exit"}

// asRoute is one of kin serve's routes as the dispatcher runs it.
func (s *Server) asRoute(r route) Route {
	return Route{Handle: func(ctx context.Context, params json.RawMessage) (any, error) { return r.handle(ctx, s, params) },
		Order: r.order, StartsInOrder: r.startsInOrder, Cancellable: r.cancellable, Before: r.before, Bulk: r.bulk}
}

func (s *Server) hold(key, method string)      { s.disp.Hold(key, method) }
func (s *Server) cancelRequest(id jsonrpc2.ID) { s.disp.Cancel(id) }

// awaitReply blocks while a request on sessionID holds method (see Hold).
func (s *Server) awaitReply(sessionID, method string) {
	s.disp.AwaitReply(SessionKey(sessionID), method)
}
