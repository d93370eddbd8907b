package acp

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/mcp/manager"
)

// asker carries the broker's questions to the client: an approval as
// session/request_permission, an MCP server's question and kin's own (the
// ask tool) as elicitation/create. The broker and the gate decide; this only relays:
// an answer that is not one of the request's options, a cancelled
// outcome, a failed request or no answer at all is a refusal.
type asker struct{ s *Server }

// pendingAsk is one request kin is waiting on the client for.
type pendingAsk struct {
	q      ask.Question
	cancel context.CancelFunc
}

// askTable is the connection's outstanding requests to the client, by the
// question's id (a question asked again on session/load has two).
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
	t.m[p.q.ID] = append(t.m[p.q.ID], p)
}

// done removes every request for id and returns them.
func (t *askTable) done(id string) []*pendingAsk {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := t.m[id]
	delete(t.m, id)
	return ps
}

// Asked implements ask.Notifier. It must not wait: the client is asked on
// a goroutine of its own.
func (a asker) Asked(q ask.Question) {
	s := a.s
	switch b := q.Body.(type) {
	case permission.Request:
		b.RequestID = q.ID
		if b.SessionID == "" {
			// A configured server's launch: asked in the session whose
			// prompt starts the servers.
			b.SessionID = s.askingSession()
		}
		if sid, _, ok := s.frontOf(b.Parent); ok {
			// A subagent's call: asked in the session it works for.
			b.SessionID = sid
		}
		q.Body = b
		s.log.Info("approval requested", zap.String("request", q.ID), zap.String("kind", b.Kind), zap.String("tool", b.ToolName), zap.String("session", b.SessionID))
		if b.SessionID == "" {
			s.log.Warn("an approval with no session to ask in was denied", zap.String("request", q.ID), zap.String("kind", b.Kind))
			go s.respond(q.ID, permission.Deny)
			return
		}
		if _, synthetic := permissionToolCallID(b); synthetic {
			s.update(b.SessionID, syntheticToolCall(b))
		}
		s.reask(q)
	case manager.ElicitRequest:
		svc, _ := s.service()
		if svc != nil {
			if sid, callID, ok := s.frontOf(svc.ParentOf(b.SessionID)); ok {
				// An MCP server's question during a subagent's call: asked
				// in the session, on the delegate call, it works for.
				b.SessionID, b.CallID = sid, callID
				q.Body = b
			}
		}
		s.log.Info("elicitation requested", zap.String("request", q.ID), zap.String("server", b.Server), zap.String("mode", b.Mode))
		s.reask(q)
	case agent.Question:
		s.log.Info("kin asks the person", zap.String("request", q.ID), zap.String("session", b.SessionID), zap.Int("questions", len(b.Items)))
		s.reask(q)
	}
}

// reask sends the client the request for q (again, on session/load).
func (s *Server) reask(q ask.Question) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pendingAsk{q: q, cancel: cancel}
	s.waits.add(p)
	go func() {
		defer cancel()
		switch b := q.Body.(type) {
		case permission.Request:
			s.askPermission(ctx, q.ID, b)
		case manager.ElicitRequest:
			s.askElicitation(ctx, q.ID, b)
		case agent.Question:
			s.askQuestion(ctx, q.ID, b)
		}
	}()
}

func (s *Server) askPermission(ctx context.Context, id string, req permission.Request) {
	var resp RequestPermissionResponse
	err := s.call(ctx, "perm", MethodRequestPermission, permissionRequest(req), &resp)
	switch {
	case errors.Is(err, context.Canceled):
		return // resolved meanwhile (a cancelled turn, another answer)
	case err != nil:
		s.log.Warn("session/request_permission failed; denied", zap.String("request", id), zap.Error(err))
		s.respond(id, permission.Deny)
	case resp.Outcome.Outcome == "selected" && !offered(resp.Outcome.OptionID):
		s.log.Warn("the client chose an option kin does not offer over ACP; denied", zap.String("request", id), zap.String("decision", resp.Outcome.OptionID))
		s.respond(id, permission.Deny)
	case resp.Outcome.Outcome == "selected":
		s.respond(id, resp.Outcome.OptionID)
	default: // cancelled: the client cancelled the prompt
		s.respond(id, permission.Deny)
	}
}

func (s *Server) respond(id, decision string) {
	_, gate := s.service()
	if err := gate.Respond(id, decision); err != nil && !errors.Is(err, permission.ErrUnknownRequest) {
		s.log.Warn("the client's answer is not one of the options; denied", zap.String("request", id), zap.String("decision", decision), zap.Error(err))
		_ = gate.Respond(id, permission.Deny)
	}
}

// Resolved implements ask.Notifier: what still waits on the client is
// withdrawn ($/cancel_request), and the card of an approval that was not a
// tool call is closed. A tool call's card follows from the call's own next
// status (running, denied).
func (a asker) Resolved(q ask.Question, ans ask.Answer) {
	a.s.log.Info("question resolved", zap.String("request", q.ID), zap.String("choice", ans.Choice), zap.String("reason", ans.Reason))
	ps := a.s.waits.done(q.ID)
	for _, p := range ps {
		p.cancel()
	}
	if len(ps) == 0 {
		return
	}
	if b, ok := ps[0].q.Body.(permission.Request); ok {
		if _, synthetic := permissionToolCallID(b); synthetic {
			a.s.update(b.SessionID, syntheticDone(b, ans.Choice, ans.Reason))
		}
	}
}

// askingSession is the session a question of no session (a configured
// server's launch) is asked in: the one whose prompt starts the servers.
func (s *Server) askingSession() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launching
}
