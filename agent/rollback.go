package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/checkpoint"
	"github.com/kin-dev/kin/agent/session"
)

// Rollback takes the session's last n turns out of the conversation the
// model sees (the log keeps them, and a rollback record marks them) and
// undoes their file changes newest first, exactly as Undo does: a file
// changed since by someone else is left as it is and reported as a
// conflict, a turn's commands are reported as not undoable. It refuses
// while a turn runs, and when fewer than n turns can be taken out (turns a
// compaction summarised are part of the summary).
func (s *Service) Rollback(ctx context.Context, sessionID string, n int, defaultRoots []string) (session.Rollback, error) {
	if n < 1 {
		return session.Rollback{}, fmt.Errorf("%w: turns must be 1 or more", ErrBadParams)
	}
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return session.Rollback{}, err
	}
	if err := sess.readOnly(); err != nil {
		return session.Rollback{}, err
	}
	if !sess.hold() {
		return session.Rollback{}, ErrTurnRunning
	}
	defer sess.unhold()
	sess.puttingBack.Lock()
	defer sess.puttingBack.Unlock()
	c, err := sess.conversation()
	if err != nil {
		return session.Rollback{}, fmt.Errorf("reading the session log: %w", err)
	}
	sess.wmu.Lock()
	turns, have := c.lastTurns(n)
	copied := map[string]string{}
	questions := map[string]string{} // taken now: the turns leave the conversation before their files go back
	// turns whose undo kin was stopped in: their checkpoints may say undone
	// with files not put back, and the rollback puts back the rest
	unfinished := map[string]bool{}
	for _, id := range turns {
		if from := c.copiedFrom(id); from != "" {
			copied[id] = from
		}
		questions[id] = c.question(id)
		if c.undoing[id] {
			unfinished[id] = true
		}
	}
	sess.wmu.Unlock()
	if turns == nil {
		return session.Rollback{}, fmt.Errorf("%w: turns is %d, but the conversation holds %d turn(s) that can be rolled back (turns a compaction summarised cannot be)", ErrBadParams, n, have)
	}
	// The turns leave the conversation first, durably, and only then do
	// files go back: a kin killed while it puts them back (or before it
	// records what it did) leaves them out, and the kin that reads the log
	// next says the rollback may be unfinished, instead of showing the
	// model turns as done over files that were put back.
	start := session.Record{Type: session.TypeRollback, Status: session.RollbackStarted, Rollback: &session.Rollback{Turns: turns}}
	if err := sess.appendSynced(start); err != nil {
		return session.Rollback{}, fmt.Errorf("kin could not record the rollback, so it rolled nothing back: %w", err)
	}
	sess.rolledBack(c, turns)
	rb := session.Rollback{Turns: turns}
	fa := s.frontFiles(sessionID)
	for _, id := range turns {
		if from := copied[id]; from != "" {
			// The files are shared with the original, whose checkpoints these
			// are: undoing them here would undo the original's work too.
			rb.Errors = append(rb.Errors, session.RollbackError{TurnID: id,
				Error: "this turn was copied by a fork from session " + from + "; its file changes are that session's to undo, so they were left as they are"})
			continue
		}
		u, uerr := s.checkpoints.UndoWith(ctx, sessionID, id, fa, checkpoint.Undoing{Unfinished: func(t string) bool { return unfinished[t] }})
		switch {
		case errors.Is(uerr, checkpoint.ErrNoCheckpoint), errors.Is(uerr, checkpoint.ErrUndone), errors.Is(uerr, checkpoint.ErrNothingToUndo):
			// No file to put back; its commands are still worth saying.
			calls, cerr := s.checkpoints.NotUndoable(sessionID, id)
			if cerr == nil && len(calls) > 0 {
				rb.Undos = append(rb.Undos, session.Undo{TurnID: id, Question: questions[id], Restored: []string{}, NotUndoable: calls})
			}
			continue
		case uerr != nil && u.TurnID == "":
			rb.Errors = append(rb.Errors, session.RollbackError{TurnID: id, Error: uerr.Error()})
			continue
		case uerr != nil:
			rb.Errors = append(rb.Errors, session.RollbackError{TurnID: id, Error: uerr.Error()})
		}
		u.Question = questions[id]
		rb.Undos = append(rb.Undos, u)
	}
	if s.rollbackRestored != nil {
		s.rollbackRestored()
	}
	outcome := session.Record{Type: session.TypeRollback, Rollback: &rb}
	if err := sess.appendSynced(outcome); err != nil {
		// Owed: the conversation has it now, the log before its next
		// record (a kin stopped first says the rollback is unfinished).
		sess.owe(outcome)
		// The answer carries only this error (turn/rollback answers one or
		// the other), so it says itself which files went back.
		return rb, fmt.Errorf("kin put back %s, and the model no longer sees those turns, but kin could not record what it put back: %w", restoredText(rb), err)
	}
	return rb, nil
}

// rolledBack takes out of the session's state what the rolled-back turns
// brought, so that it follows from the turns that remain, as it does for a
// kin that resumes the session from its log: their plan (the one before is
// in force again), the skills they loaded, and the deferred tools found
// (searches and calls of the turns that remain find them again).
func (sess *Session) rolledBack(c *convo, turns []string) {
	sess.wmu.Lock()
	plan := c.plans.Current()
	sess.wmu.Unlock()
	sess.mu.Lock()
	sess.plan = plan
	sess.mu.Unlock()
	sess.unloadTurns(turns)
	sess.found.Reset()
}

// restoredText names the files a rollback put back, for a person reading
// its error: "no file", "1 file (a.go)", "12 files (a.go, b.go, … and 2
// more)".
func restoredText(rb session.Rollback) string {
	var paths []string
	for _, u := range rb.Undos {
		paths = append(paths, u.Restored...)
	}
	switch {
	case len(paths) == 0:
		return "no file"
	case len(paths) == 1:
		return "1 file (" + paths[0] + ")"
	}
	const shown = 10
	list := strings.Join(paths[:min(len(paths), shown)], ", ")
	if len(paths) > shown {
		list += fmt.Sprintf(", … and %d more", len(paths)-shown)
	}
	return fmt.Sprintf("%d files (%s)", len(paths), list)
}
