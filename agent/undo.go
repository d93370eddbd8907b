package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/checkpoint"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// ErrNothingToUndo is wrapped by Undo when there is no change to undo: no
// turn changed files, the named turn changed none, or it is undone already.
var ErrNothingToUndo = errors.New("nothing to undo")

// checkpointFor is a call's BeforeWrite: every file write of kin's tools
// keeps what it replaces as the turn's checkpoint first.
func (t *turn) checkpointFor(callID string) tool.BeforeWrite {
	return func(_ context.Context, w tool.FileWrite) error {
		return t.svc.checkpoints.Before(checkpoint.Change{SessionID: t.sess.id, TurnID: t.id, CallID: callID,
			Path: w.Path, Old: w.Old, Existed: w.Existed, New: w.New})
	}
}

// untracked notes, before it runs, a call whose changes undo cannot
// reverse: a command (it may change any file), or an MCP tool that may
// change something (outside kin's reach). A note that cannot be kept is
// logged: it only makes undo's report less complete.
func (t *turn) untracked(tl tool.Tool, c model.Call, ap *tool.Approval) {
	var reason string
	switch {
	case tool.ReadOnly(tl) || tl.Spec().Kind == tool.KindEdit:
		return
	case tl.Spec().Kind == tool.KindExecute:
		reason = "a command: kin does not know which files it changed (commands run on the workspace itself, not on a copy)"
	case ap != nil && ap.Server != "":
		reason = "an MCP tool: what it changed is outside kin's reach"
	default:
		reason = "kin keeps only what its file tools change"
	}
	n := session.NotUndoable{CallID: c.CallID, Name: c.Name, Reason: reason}
	if ap != nil {
		n.Title = ap.Title
	}
	if err := t.svc.checkpoints.Untracked(t.sess.id, t.id, n); err != nil {
		t.svc.log.Warn("checkpoint note failed", zap.String("session", t.sess.id), zap.String("turn", t.id), zap.Error(err))
	}
}

// Undo puts back the files a turn changed with kin's tools (turnID "": the
// latest turn whose changes are not undone) and records what it did. A file
// changed since by someone else is left as it is and reported as a
// conflict; the turn's commands are reported as not undoable. It refuses
// while a turn runs on the session.
func (s *Service) Undo(sessionID, turnID string, defaultRoots []string) (session.Undo, error) {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return session.Undo{}, err
	}
	if err := sess.readOnly(); err != nil {
		return session.Undo{}, err
	}
	if !sess.hold() {
		return session.Undo{}, ErrTurnRunning
	}
	defer sess.unhold()
	u, err := s.checkpoints.Undo(sessionID, turnID)
	switch {
	case errors.Is(err, checkpoint.ErrNothingToUndo), errors.Is(err, checkpoint.ErrNoCheckpoint), errors.Is(err, checkpoint.ErrUndone):
		return session.Undo{}, fmt.Errorf("%w: %v", ErrNothingToUndo, err)
	case err != nil && u.TurnID == "":
		return session.Undo{}, err
	}
	if _, rerr := sess.append(session.Record{Type: session.TypeUndo, Undo: &u}); rerr != nil {
		s.log.Error("session log write failed", zap.String("session", sessionID), zap.Error(rerr))
	} else if rerr := sess.sync(); rerr != nil {
		s.log.Error("session log sync failed", zap.String("session", sessionID), zap.Error(rerr))
	}
	return u, err
}

// undoNote tells the model what an undo did, so it does not take its own
// edits for granted.
func undoNote(u *session.Undo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[kin: the person undid the file changes of turn %s", u.TurnID)
	if len(u.Restored) > 0 {
		fmt.Fprintf(&b, "; restored to how they were before that turn: %s", strings.Join(u.Restored, ", "))
	}
	if len(u.Conflicts) > 0 {
		var paths []string
		for _, c := range u.Conflicts {
			paths = append(paths, c.Path)
		}
		fmt.Fprintf(&b, "; left as they are (changed since): %s", strings.Join(paths, ", "))
	}
	if len(u.NotUndoable) > 0 {
		b.WriteString("; what that turn's commands changed was not undone")
	}
	b.WriteString(". Read files again before relying on their content.]")
	return b.String()
}
