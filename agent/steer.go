package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/session"
)

// ErrTurnEnded is wrapped by Steer when the turn it names is not running:
// it ended (or never ran here), so the words would join nothing.
var ErrTurnEnded = errors.New("the turn is not running")

// Steered is sent when the person's words joined a running turn: at the
// next model request, where the transcript shows them.
type Steered struct {
	SessionID string
	TurnID    string
	Input     string
	// Parts are what the words attached, as history shows them.
	Parts []Part
}

// SteerEvents is Events that also hear of steered words (kin serve's
// turn/steered). A front end without it still sees them in history.
type SteerEvents interface {
	Steered(Steered)
}

// steering is a running turn's queue of the person's words that have not
// yet reached the model. Words join at the next model request only: a
// request or call that runs is never interrupted for them.
type steering struct {
	mu      sync.Mutex
	pending []question
	closed  bool // the turn ended (or is ending): nothing more joins
}

func (s *steering) add(q question) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.pending = append(s.pending, q)
	return true
}

func (s *steering) take() []question {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

// closeIfEmpty ends steering when nothing waits, atomically: words that
// came while the model answered keep the turn going instead of being lost.
func (s *steering) closeIfEmpty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		return false
	}
	s.closed = true
	return true
}

// close ends steering and returns the words that never reached the model.
func (s *steering) close() []question {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := s.pending
	s.pending = nil
	return out
}

// Steer adds the person's words to the session's running turn turnID. They
// are checked like a question (a file part is read now, under read_file's
// rules) and reach the model at its next request. A turn that is not
// running answers ErrTurnEnded.
func (s *Service) Steer(sessionID, turnID string, in Input) error {
	s.mu.Lock()
	sess := s.sessions[sessionID]
	s.mu.Unlock()
	if sess == nil {
		if !s.store.Exists(sessionID) {
			return fmt.Errorf("%w: %s", ErrSessionNotFound, sessionID)
		}
		return fmt.Errorf("%w: turn %s of session %s has ended; start a new turn instead", ErrTurnEnded, turnID, sessionID)
	}
	sess.mu.Lock()
	r := sess.running
	sess.mu.Unlock()
	if r == nil || r.turn == nil || r.turnID != turnID || r.cancelled {
		return fmt.Errorf("%w: turn %s of session %s has ended; start a new turn instead", ErrTurnEnded, turnID, sessionID)
	}
	t := r.turn
	q, err := assemble(in, sess.toolEnv(turnID, ""), t.cfg, s.opts.Tools.Tools, s.resourceReader(context.Background(), sessionID))
	if err != nil {
		return err
	}
	q.rec.Type = session.TypeSteer
	if !t.steer.add(q) {
		return fmt.Errorf("%w: turn %s of session %s has ended; start a new turn instead", ErrTurnEnded, turnID, sessionID)
	}
	return nil
}

// joinSteers records the words that came since the last request, so the
// next request carries them, and shows each where it joined. Steered words
// are the person's words like a question, so they pass the
// UserPromptSubmit hooks first, as a question does: a hook that keeps
// secrets or other words away from the model must see these too, or
// sending them while a turn runs would be the way past it. Words a hook
// blocks are not sent (the person is told why); a hook's continue:false
// ends the turn (stopped), and the words after them are not sent either.
// joined counts the messages that will reach the model.
func (t *turn) joinSteers(ctx context.Context) (joined int, stop string, stopped bool) {
	qs := t.steer.take()
	for i, q := range qs {
		contexts, blocks, why, halt := gather(t.runHooks(ctx, hooks.UserPromptSubmit, "", hooks.Input{Prompt: q.rec.Text}))
		switch {
		case ctx.Err() != nil:
			t.unsent(qs[i:])
			return joined, "", false // the turn ends as cancelled (step)
		case len(blocks) > 0:
			t.events().Notice(Notice{Level: "warning", Source: "hooks", SessionID: t.sess.id,
				Message: fmt.Sprintf("Your words were not sent to the model: a hook blocked them (%q): %s", titleFrom(textOf(q)), strings.Join(blocks, "; "))})
			continue
		case halt:
			t.unsent(qs[i:])
			return joined, why, true
		}
		t.addContext(contexts...)
		rec, ok := t.record(q.rec)
		if !ok {
			t.unsent([]question{q})
			continue
		}
		joined++
		if len(q.touched) > 0 {
			t.mu.Lock()
			t.touched = append(t.touched, q.touched...)
			t.mu.Unlock()
		}
		if ev, ok := t.events().(SteerEvents); ok {
			ev.Steered(Steered{SessionID: t.sess.id, TurnID: t.id, Input: rec.Text, Parts: session.AttachedParts(rec.Parts)})
		}
	}
	return joined, "", false
}

// textOf is a question's words as a notice names them.
func textOf(q question) string {
	if q.rec.Text == "" {
		return "(attachments)"
	}
	return q.rec.Text
}

// unsent tells the person which of their words never reached the model.
func (t *turn) unsent(qs []question) {
	for _, q := range qs {
		text := textOf(q)
		t.events().Notice(Notice{Level: "warning", Source: "session", SessionID: t.sess.id,
			Message: fmt.Sprintf("Your words were not sent to the model: the turn ended before its next request (%q). Send them as a new question.", titleFrom(text))})
	}
}
