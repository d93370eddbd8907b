package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/review"
	"github.com/kin-dev/kin/agent/session"
)

// handleReviewStart is review/start: the diff is computed (and refused
// with a clear error: no repository, an unknown base or commit, nothing to
// review) before any session is made or turn started.
func handleReviewStart(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p ReviewStartParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	target := review.Target{Uncommitted: p.Target.Uncommitted, Base: p.Target.Base, Commit: p.Target.Commit}
	if err := target.Validate(); err != nil {
		return nil, invalid("invalid params: %v", err)
	}
	svc, _ := s.service()
	id := p.SessionID
	if id == "" {
		// The diff first, in the folder the session would have: no
		// session is left behind by a review that cannot start.
		ws := s.workspace()
		if len(ws) == 0 {
			return nil, invalid("invalid params: no sessionId and no workspace folder to review")
		}
		if _, err := review.Compute(ctx, ws[0], target); err != nil {
			return nil, invalid("invalid params: %v", err)
		}
		opened, err := svc.NewSession(agent.SessionOptions{Roots: ws})
		if err != nil {
			return nil, err
		}
		id = opened.Info.SessionID
	}
	r, err := svc.PrepareReview(ctx, id, target, s.workspace())
	if err != nil {
		return nil, err
	}
	turnID, err := s.startReview(svc, r, p.SessionID != "")
	if err != nil {
		return nil, err
	}
	return reviewStarted(r, turnID), nil
}

// startReview starts a review's turn, its turn/started held for the reply
// as turn/start's is (see startTurn). A review/start without sessionId
// made its session in this request: its notifications are not held (the
// reply's order key is not the new session's).
func (s *Server) startReview(svc *agent.Service, r *agent.Review, hold bool) (string, error) {
	svc.Settle(r.SessionID)
	if hold {
		s.hold(SessionKey(r.SessionID), NotifyTurnStarted)
	}
	return svc.StartReview(r, s.workspace())
}

func reviewStarted(r *agent.Review, turnID string) ReviewStartResult {
	return ReviewStartResult{SessionID: r.SessionID, TurnID: turnID, Root: r.Diff.Root, Files: append([]string{}, r.Diff.Files...),
		Left: r.Diff.Left, Cut: r.Diff.Cut}
}

func reviewFinding(sessionID, turnID string, f session.Finding) ReviewFinding {
	return ReviewFinding{SessionID: sessionID, TurnID: turnID, File: f.File, Severity: f.Severity, Title: f.Title, Body: f.Body,
		Range: Range{Start: Position{Line: f.Range.Start.Line, Character: f.Range.Start.Character},
			End: Position{Line: f.Range.End.Line, Character: f.Range.End.Character}}}
}

// Finding implements agent.FindingEvents: review/finding.
func (e events) Finding(v agent.Finding) {
	e.s.notify(NotifyReviewFinding, reviewFinding(v.SessionID, v.TurnID, v.Finding))
}

var _ agent.FindingEvents = events{}
