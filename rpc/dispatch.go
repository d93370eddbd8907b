package rpc

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// How requests are dispatched.
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

// ordering returns a request's ordering key from its params ("": none).
type ordering func(params json.RawMessage) string

// bySession orders requests naming the same sessionId.
func bySession(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p) // bad params are the handler's to report
	return sessionKey(p.SessionID)
}

func sessionKey(id string) string { return "session " + id }

// inGroup orders every request of a group.
func inGroup(name string) ordering {
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
	// ctx ends on $/cancelRequest or teardown.
	ctx    context.Context
	cancel context.CancelFunc
}

// dispatch runs a request off the read loop. It is called on the loop, in
// arrival order, and returns at once.
func (s *Server) dispatch(conn *jsonrpc2.Conn, id jsonrpc2.ID, r route, params json.RawMessage) {
	key := ""
	if r.order != nil {
		key = r.order(params)
	}
	s.mu.Lock()
	if s.state == stateShutDown {
		s.mu.Unlock()
		go s.replyErr(context.Background(), conn, id, errShutDown)
		return
	}
	req := &inflight{}
	req.ctx, req.cancel = context.WithCancel(s.base)
	s.inflight[id] = req
	s.running.Add(1) // under mu, so never after teardown's Wait began
	s.mu.Unlock()
	wait, done := s.order.enter(key)

	go func() {
		defer s.running.Done()
		defer done()
		defer func() {
			s.mu.Lock()
			if s.inflight[id] == req {
				delete(s.inflight, id)
			}
			s.mu.Unlock()
			req.cancel()
		}()
		select {
		case <-wait:
		case <-req.ctx.Done():
			// Cancelled before it ran: nothing was done, so say so now,
			// but keep later requests of its key behind the earlier ones.
			s.replyErr(context.Background(), conn, id, s.cancelledErr())
			<-wait
			return
		}
		if r.startsInOrder {
			done() // it waited for the earlier ones; later ones need not wait for it
		}
		res, err := s.run(req, r, key, params)
		s.reply(context.Background(), conn, id, res, err)
		if r.before != "" {
			s.release(key, r.before)
		}
	}()
}

// run calls the handler once the request's turn has come.
func (s *Server) run(req *inflight, r route, key string, params json.RawMessage) (any, error) {
	if r.bulk {
		select {
		case s.bulk <- struct{}{}:
			defer func() { <-s.bulk }()
		case <-req.ctx.Done():
			return nil, s.cancelledErr()
		}
	}
	s.mu.Lock()
	down := s.state == stateShutDown
	s.mu.Unlock()
	if down || req.ctx.Err() != nil {
		return nil, s.cancelledErr()
	}
	// A request that changes things runs to its end once started and
	// answers with what it did; only one that can stop cleanly gets the
	// context that $/cancelRequest ends.
	ctx := s.base
	if r.cancellable {
		ctx = req.ctx
	}
	res, err := r.handle(ctx, s, params)
	if r.cancellable && req.ctx.Err() != nil {
		return nil, errCancelled // by $/cancelRequest, or by shutdown
	}
	return res, err
}

var (
	errShutDown  = &jsonrpc2.Error{Code: CodeInvalidRequest, Message: "kin: the server is shut down; send exit"}
	errCancelled = &jsonrpc2.Error{Code: CodeRequestCancelled, Message: "request cancelled"}
)

// cancelledErr is the answer to a request stopped before it ran: cancelled,
// or refused because the server shut down meanwhile.
func (s *Server) cancelledErr() *jsonrpc2.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == stateShutDown {
		return errShutDown
	}
	return errCancelled
}

// cancelRequest is $/cancelRequest: it ends the request's context. A request
// still waiting for its turn is answered -32800 at once; a running one only
// if it is cancellable (route.cancellable).
func (s *Server) cancelRequest(id jsonrpc2.ID) {
	s.mu.Lock()
	req := s.inflight[id]
	s.mu.Unlock()
	if req != nil {
		req.cancel()
	}
}

// hold makes the session's next notification of method (turn/started,
// turn/completed) wait until release, which the dispatcher calls once the
// request's reply is written (route.before): an editor learns a turnId from
// turn/start's answer before any notification names it, and turn/cancel's
// answer before the turn's end. The handler takes the hold; it must not
// then wait for a turn to send the held notification (turn/start settles a
// cancelled turn before it holds). Requests on one session run one at a
// time, so a session holds at most one notification of each method.
func (s *Server) hold(key, method string) {
	s.mu.Lock()
	s.holds[key+" "+method] = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) release(key, method string) {
	s.mu.Lock()
	ch := s.holds[key+" "+method]
	delete(s.holds, key+" "+method)
	s.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// awaitReply blocks while a request on sessionID holds method (see hold).
func (s *Server) awaitReply(sessionID, method string) {
	s.mu.Lock()
	ch := s.holds[sessionKey(sessionID)+" "+method]
	s.mu.Unlock()
	if ch != nil {
		<-ch
	}
}
