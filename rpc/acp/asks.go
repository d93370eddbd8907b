package acp

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/permission"
)

// asks carries the gate's questions to the client as
// session/request_permission requests and the answers back to the gate.
// The gate decides; this only relays: an answer that is not one of the
// request's options, a cancelled outcome, or no answer at all is a deny.
type asks struct{ s *Server }

// pendingAsk is one request_permission kin is waiting on.
type pendingAsk struct {
	req    permission.Request
	cancel context.CancelFunc
}

// askTable is the connection's outstanding permission requests, by kin's
// request id.
type askTable struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string][]*pendingAsk
}

func (t *askTable) add(p *pendingAsk) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string][]*pendingAsk{}
	}
	t.m[p.req.RequestID] = append(t.m[p.req.RequestID], p)
}

// done removes every request for id (kin asked it again on session/load:
// one answer settles all) and returns them.
func (t *askTable) done(id string) []*pendingAsk {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := t.m[id]
	delete(t.m, id)
	return ps
}

// ApprovalRequested implements permission.Notifier: it asks the client off
// the caller's goroutine (the gate waits for Respond, not for this).
func (a asks) ApprovalRequested(req permission.Request) {
	s := a.s
	if req.SessionID == "" {
		req.SessionID = s.askingSession()
	}
	a.s.log.Info("approval requested", zap.String("request", req.RequestID), zap.String("kind", req.Kind), zap.String("tool", req.ToolName), zap.String("session", req.SessionID))
	if req.SessionID == "" {
		// No session to ask in: nobody can answer, so it is refused.
		s.log.Warn("an approval with no session to ask in was denied", zap.String("request", req.RequestID), zap.String("kind", req.Kind))
		go s.respond(req.RequestID, permission.Deny)
		return
	}
	if _, synthetic := permissionToolCallID(req); synthetic {
		s.update(req.SessionID, syntheticToolCall(req))
	}
	s.reask(req)
}

// reask sends a request_permission for req (again, on session/load).
func (s *Server) reask(req permission.Request) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pendingAsk{req: req, cancel: cancel}
	s.asks.add(p)
	go func() {
		defer cancel()
		var resp RequestPermissionResponse
		err := s.call(ctx, "perm", MethodRequestPermission, permissionRequest(req), &resp)
		switch {
		case errors.Is(err, context.Canceled):
			return // resolved meanwhile (cancelled turn, another answer)
		case err != nil:
			s.log.Warn("session/request_permission failed; denied", zap.String("request", req.RequestID), zap.Error(err))
			s.respond(req.RequestID, permission.Deny)
		case resp.Outcome.Outcome == "selected":
			s.respond(req.RequestID, resp.Outcome.OptionID)
		default: // cancelled: the client's turn was cancelled
			s.respond(req.RequestID, permission.Deny)
		}
	}()
}

func (s *Server) respond(requestID, decision string) {
	_, gate := s.service()
	if err := gate.Respond(requestID, decision, false); err != nil && !errors.Is(err, permission.ErrUnknownRequest) {
		s.log.Warn("the client's answer was refused; denied", zap.String("request", requestID), zap.String("decision", decision), zap.Error(err))
		_ = gate.Respond(requestID, permission.Deny, false)
	}
}

// ApprovalResolved implements permission.Notifier: what still waits on the
// client is withdrawn ($/cancel_request), and the card of a request that
// was not a tool call is closed. A tool call's card follows from the
// call's own next status (running, denied).
func (a asks) ApprovalResolved(res permission.Resolution) {
	a.s.log.Info("approval resolved", zap.String("request", res.RequestID), zap.String("decision", res.Decision), zap.String("reason", res.Reason))
	for i, p := range a.s.asks.done(res.RequestID) {
		p.cancel()
		if _, synthetic := permissionToolCallID(p.req); synthetic && i == 0 {
			a.s.update(p.req.SessionID, syntheticDone(p.req, res.Decision, res.Reason))
		}
	}
}

// askingSession is the session a question of no session (a configured
// server's launch) is asked in: the one whose prompt is starting the
// servers.
func (s *Server) askingSession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launching
}
