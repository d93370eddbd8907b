package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/review"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// turnSpec is what a special turn changes (a review's; the zero value is
// an ordinary turn): a mode for this turn alone (never wider than the
// session's), instructions added to the request's, and tools of its own,
// made for the turn.
type turnSpec struct {
	mode         permission.Mode
	instructions string
	tools        func(t *turn) []tool.Tool
}

// mode is the mode the turn's calls are decided in.
func (t *turn) mode() permission.Mode {
	if t.spec.mode != "" {
		return permission.Narrower(t.spec.mode, t.sess.currentMode())
	}
	return t.sess.currentMode()
}

// specTools are the turn's own tools (a review's report_finding).
func (t *turn) specTools() []tool.Tool {
	if t.spec.tools == nil {
		return nil
	}
	return t.spec.tools(t)
}

// Finding is a review finding as it is reported (FindingEvents), with the
// repository it is in.
type Finding struct {
	SessionID string
	TurnID    string
	Root      string
	session.Finding
}

// FindingEvents is Events that also hear of review findings as the model
// reports them, before the turn ends (review/finding).
type FindingEvents interface {
	Finding(Finding)
}

// Review is a review ready to start: the session and the diff.
type Review struct {
	SessionID string
	Diff      *review.Diff
}

// PrepareReview works out the diff target names in the session's working
// folder (its first root). A bad target, a folder that is no repository,
// an unknown revision and an empty diff are ErrBadParams, saying which.
func (s *Service) PrepareReview(ctx context.Context, sessionID string, target review.Target, defaultRoots []string) (*Review, error) {
	if err := s.canStart(sessionID, defaultRoots); err != nil {
		return nil, err
	}
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return nil, err
	}
	roots := sess.sessionRoots()
	if len(roots) == 0 {
		return nil, fmt.Errorf("%w: the session has no folder to review", ErrBadParams)
	}
	d, err := review.Compute(ctx, roots[0], target)
	if err != nil {
		if review.IsUserError(err) {
			return nil, fmt.Errorf("%w: %v", ErrBadParams, err)
		}
		return nil, fmt.Errorf("computing the diff to review: %w", err)
	}
	return &Review{SessionID: sessionID, Diff: d}, nil
}

// StartReview starts the review's turn: in ask mode (only tools that
// change nothing; whatever the session's mode), with kin's review
// instructions, the diff as the question's resource, and report_finding,
// whose findings are recorded in the session log (session/resume returns
// them) and reported through FindingEvents before the turn ends.
func (s *Service) StartReview(r *Review, defaultRoots []string) (string, error) {
	d := r.Diff
	// One report_finding for the whole turn (tools are asked for at every
	// step): its count of findings is the review's.
	var once sync.Once
	var rt *review.Tool
	spec := turnSpec{mode: permission.ModeAsk, instructions: "\n\n" + review.Instructions,
		tools: func(t *turn) []tool.Tool {
			once.Do(func() {
				rt = review.NewTool(d.Root, func(_ context.Context, _ tool.Env, f session.Finding) error {
					return t.finding(d.Root, f)
				})
			})
			return []tool.Tool{rt}
		}}
	in := Input{Parts: []Part{{Type: "text", Text: d.Request()},
		{Type: "resource", URI: d.URI(), MimeType: "text/x-diff", Text: d.Framed()}}}
	return s.startTurn(r.SessionID, in, defaultRoots, spec)
}

// finding records a finding of the turn and reports it.
func (t *turn) finding(root string, f session.Finding) error {
	if _, ok := t.record(session.Record{Type: session.TypeFinding, Finding: &f}); !ok {
		return fmt.Errorf("kin could not save this session")
	}
	if fe, ok := t.events().(FindingEvents); ok {
		fe.Finding(Finding{SessionID: t.sess.id, TurnID: t.id, Root: root, Finding: f})
	}
	return nil
}
