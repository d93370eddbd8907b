package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/checkpoint"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// ErrNothingToUndo is wrapped by Undo when there is no change to undo: no
// turn changed files, the named turn changed none, or it is undone already.
var ErrNothingToUndo = errors.New("nothing to undo")

// checkpointed is the session's file access as the tools get it: every
// write of a turn's tool first keeps what it replaces as the turn's
// checkpoint (durably), and a write that surely did not happen drops it
// again. A write that may have happened (ErrUnknown) keeps it: undo looks
// at the file to decide.
type checkpointed struct {
	files.Access
	store *checkpoint.Store
}

// Unwrap returns the front end's Access (files.Find looks through it).
func (c checkpointed) Unwrap() files.Access { return c.Access }

func (c checkpointed) Write(ctx context.Context, ch files.Change) (files.Written, error) {
	if ch.TurnID == "" {
		return c.Access.Write(ctx, ch)
	}
	revert, err := c.store.Before(checkpoint.Change{SessionID: ch.SessionID, TurnID: ch.TurnID, CallID: ch.CallID,
		Path: ch.Path, Old: ch.Old, Existed: ch.Existed, New: ch.New})
	if err != nil {
		return files.Written{}, fmt.Errorf("kin could not keep a checkpoint to undo this change (%v)", err)
	}
	w, err := c.Access.Write(ctx, ch)
	if err != nil && !errors.Is(err, files.ErrUnknown) {
		revert()
	}
	return w, err
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
	sid, tid := t.undoTurn()
	if err := t.svc.checkpoints.Untracked(sid, tid, n); err != nil {
		t.svc.log.Warn("checkpoint note failed", zap.String("session", t.sess.id), zap.String("turn", t.id), zap.Error(err))
	}
}

// Undo puts back the files a turn changed with kin's tools (turnID "": the
// latest turn whose changes are not undone) and records what it did. A file
// changed since by someone else is left as it is and reported as a
// conflict; the turn's commands are reported as not undoable. It refuses
// while a turn runs on the session.
func (s *Service) Undo(ctx context.Context, sessionID, turnID string, defaultRoots []string) (session.Undo, error) {
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
	sess.puttingBack.Lock()
	defer sess.puttingBack.Unlock()
	// Through the front end's access itself: undo's writes are no tool's
	// and keep no checkpoint.
	if _, err := sess.conversation(); err != nil {
		return session.Undo{}, fmt.Errorf("reading the session log: %w", err)
	}
	u, err := s.checkpoints.UndoWith(ctx, sessionID, turnID, s.frontFiles(sessionID), sess.undoing())
	switch {
	case errors.Is(err, checkpoint.ErrNothingToUndo), errors.Is(err, checkpoint.ErrNoCheckpoint), errors.Is(err, checkpoint.ErrUndone):
		return session.Undo{}, fmt.Errorf("%w: %v", ErrNothingToUndo, err)
	case err != nil && u.TurnID == "":
		return session.Undo{}, err
	}
	u.Question = sess.question(u.TurnID)
	if s.undoRestored != nil {
		s.undoRestored()
	}
	outcome := session.Record{Type: session.TypeUndo, Undo: &u}
	if rerr := sess.appendSynced(outcome); rerr != nil {
		// Owed: the conversation has it now, the log before its next
		// record (a kin stopped first says the undo is unfinished).
		sess.owe(outcome)
	}
	return u, err
}

// undoing is how an undo records itself around the files it puts back: a
// first record (started), appended and synced before any file is touched,
// so a kin stopped while it puts files back leaves a log that says the
// undo is unfinished; and a turn whose undo the log shows unfinished can
// be undone again (its checkpoint may say undone already).
func (sess *Session) undoing() checkpoint.Undoing {
	return checkpoint.Undoing{
		Unfinished: func(turnID string) bool {
			sess.wmu.Lock()
			defer sess.wmu.Unlock()
			// A rollback of the turn since finished its files (or says
			// it did not), and leaves nothing to undo; one kin was stopped
			// in may have noted the turn undone with files not put back.
			return sess.conv != nil && (sess.conv.undoing[turnID] && !sess.conv.rolled[turnID] || sess.conv.unrolled[turnID])
		},
		Start: func(turnID string) error {
			start := session.Record{Type: session.TypeUndo, Status: session.UndoStarted,
				Undo: &session.Undo{TurnID: turnID, Question: sess.question(turnID), Restored: []string{}}}
			if err := sess.appendSynced(start); err != nil {
				return fmt.Errorf("kin could not record the undo, so it put nothing back: %w", err)
			}
			return nil
		},
	}
}

// undo tells the model of an undo record. A first record (started) says
// the undo may be unfinished, as it stays when kin was stopped in it; its
// outcome's note replaces that one. It returns where the items it added
// start (it takes the sizes of what it took out off itself).
func (c *convo) undo(u *session.Undo, started bool) int {
	if u == nil {
		return len(c.items)
	}
	if started {
		if c.undoing == nil {
			c.undoing = map[string]bool{}
		}
		c.undoing[u.TurnID] = true
		c.undoingNote = undoStartedNote(u)
		c.items = append(c.items, convItem{kind: model.Message, role: "user", text: c.undoingNote})
		return len(c.items) - 1
	}
	delete(c.unrolled, u.TurnID) // an unfinished rollback of the turn: finished now
	if c.undoing[u.TurnID] {
		delete(c.undoing, u.TurnID)
		// The last such note: nothing joins the conversation between the
		// two records (the undo holds the session).
		for i := len(c.items) - 1; i >= 0 && c.undoingNote != ""; i-- {
			if it := c.items[i]; it.kind == model.Message && it.role == "user" && it.turn == "" && it.text == c.undoingNote {
				t, o := itemSize(it)
				c.textBytes -= t
				c.outBytes -= o
				c.items = slices.Delete(c.items, i, i+1)
				break
			}
		}
		c.undoingNote = ""
	}
	c.items = append(c.items, convItem{kind: model.Message, role: "user", text: undoNote(u)})
	return len(c.items) - 1
}

// undoStartedNote is what the model is told of an undo until its outcome
// comes: for good, when kin was stopped in it.
func undoStartedNote(u *session.Undo) string {
	return fmt.Sprintf("[kin: the person undid the file changes of turn %s, but kin stopped while it put its files back: some files may be as they were before that turn, others as it left them. Read files again before relying on their content.]", u.TurnID)
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
