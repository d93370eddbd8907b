package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/textdiff"
)

const (
	// maxConflictDiff bounds the diff a conflict shows.
	maxConflictDiff = 64 << 10
	// maxRestore bounds a file undo reads back (kin's tools edit files of
	// at most a few MiB).
	maxRestore = 64 << 20
)

// Undo puts back every file the turn changed with kin's tools (turnID ""
// means the latest turn whose changes are not undone yet) and marks the
// turn undone. A file whose content is no longer what the turn left is not
// touched: it is a conflict, with the diff from what kin left to what is
// there now. The turn's commands are listed as not undoable. Files are read
// and written through fa, the session's file access (the editor's buffers
// first), never around it.
func (s *Store) Undo(ctx context.Context, sessionID, turnID string, fa files.Access) (session.Undo, error) {
	return s.UndoWith(ctx, sessionID, turnID, fa, Undoing{})
}

// Undoing is what the session log adds to an undo (UndoWith).
type Undoing struct {
	// Unfinished reports a turn whose undo the session log shows started
	// and not finished: kin was stopped in it, maybe after it noted the
	// turn undone here. Such a turn can be undone again all the same (its
	// files already as before the turn count as put back).
	Unfinished func(turnID string) bool
	// Start runs once the turn is picked and before any file is touched
	// (to record that the undo started); its error stops the undo, nothing
	// touched.
	Start func(turnID string) error
}

// UndoWith is Undo with what the session log adds.
func (s *Store) UndoWith(ctx context.Context, sessionID, turnID string, fa files.Access, how Undoing) (session.Undo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, err := s.manifests(sessionID)
	if err != nil {
		return session.Undo{}, err
	}
	m, err := pick(ms, turnID, how.Unfinished)
	if err != nil {
		return session.Undo{}, err
	}
	if how.Start != nil {
		if err := how.Start(m.TurnID); err != nil {
			return session.Undo{}, err
		}
	}
	out := session.Undo{TurnID: m.TurnID, Restored: []string{}, NotUndoable: m.Calls}
	for _, f := range m.Files {
		if c := s.restore(ctx, sessionID, m.TurnID, f, fa); c != nil {
			out.Conflicts = append(out.Conflicts, *c)
		} else {
			out.Restored = append(out.Restored, f.Path)
		}
	}
	now := time.Now().UTC()
	m.UndoneAt = &now
	dir, _ := s.turnDir(sessionID, m.TurnID)
	if err := s.save(dir, m, true); err != nil {
		return out, fmt.Errorf("the files were restored, but kin could not note that the turn is undone: %w", err)
	}
	return out, nil
}

// pick finds the turn to undo; a turn whose undo is unfinished (nil:
// none is) counts as not undone.
func pick(ms []manifest, turnID string, unfinished func(string) bool) (manifest, error) {
	undone := func(m manifest) bool {
		return m.UndoneAt != nil && (unfinished == nil || !unfinished(m.TurnID))
	}
	if turnID == "" {
		for i := len(ms) - 1; i >= 0; i-- {
			if !undone(ms[i]) && len(ms[i].Files) > 0 {
				return ms[i], nil
			}
		}
		return manifest{}, ErrNothingToUndo
	}
	for _, m := range ms {
		if m.TurnID != turnID {
			continue
		}
		if undone(m) {
			return manifest{}, fmt.Errorf("%w (%s)", ErrUndone, turnID)
		}
		if len(m.Files) == 0 {
			break
		}
		return m, nil
	}
	return manifest{}, fmt.Errorf("%w (%s)", ErrNoCheckpoint, turnID)
}

// restore puts one file back, or says why not.
func (s *Store) restore(ctx context.Context, sessionID, turnID string, f file, fa files.Access) *session.UndoConflict {
	conflict := func(reason string) *session.UndoConflict {
		return &session.UndoConflict{Path: f.Path, Reason: reason}
	}
	after, err := s.blob(sessionID, f.After)
	if err != nil {
		return conflict(err.Error())
	}
	var old []byte
	if f.Existed {
		if old, err = s.blob(sessionID, f.Old); err != nil {
			return conflict(err.Error())
		}
	}
	// The path must still name the file kin changed: a folder along it
	// replaced by a symlink (to the home folder, say) would carry the
	// restore somewhere else. The write then goes through the resolver
	// anyway, beneath the workspace folder.
	if err := boundary.Unchanged(f.Path); err != nil {
		return conflict(fmt.Sprintf("%v; left as it is, nothing outside was touched", err))
	}
	cur, exists, err := current(ctx, fa, f.Path)
	if err != nil {
		return conflict("kin could not read it: " + err.Error())
	}
	switch {
	case exists == f.Existed && (!exists || bytes.Equal(cur, old)):
		return nil // already as it was before the turn
	case !exists:
		return conflict("it was deleted since kin changed it; left as it is")
	case f.Between:
		c := conflict("it was changed by someone else between kin's changes in that turn, and kin's later changes build on that; left as it is so that change is not lost (the diff shows the file since before the turn)")
		c.Diff = cut(textdiff.Unified("before the turn", "now", string(old), string(cur)))
		return c
	case !bytes.Equal(cur, after):
		c := conflict("it was changed since kin changed it; left as it is (the diff shows the change since)")
		c.Diff = cut(textdiff.Unified("kin's version", "now", string(after), string(cur)))
		return c
	}
	if !f.Existed {
		r, ok := fa.(files.Remover)
		if !ok {
			return conflict("this front end cannot remove files, so the file the turn created stays")
		}
		if err := r.Remove(ctx, f.Path, after); err != nil {
			return conflict(writeFailure("remove the file the turn created", err))
		}
		return nil
	}
	_, err = fa.Write(ctx, files.Change{Path: f.Path, Old: after, Existed: true, New: old,
		Title: "Undo turn " + turnID, SessionID: sessionID})
	if err != nil {
		return conflict(writeFailure("write it back", err))
	}
	return nil
}

func writeFailure(what string, err error) string {
	switch {
	case errors.Is(err, files.ErrConflict):
		return "it changed while kin was undoing; left as it is"
	case errors.Is(err, files.ErrUnknown):
		return "kin asked the editor to " + what + " and got no answer: it may or may not be restored (" + err.Error() + ")"
	}
	return "kin could not " + what + ": " + err.Error()
}

// current reads a file as the person sees it now (the editor's buffer
// first); a path that is no longer a regular file is an error.
func current(ctx context.Context, fa files.Access, p string) ([]byte, bool, error) {
	f, err := fa.Open(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	b, err := files.ReadAll(f, maxRestore)
	return b, true, err
}

func cut(s string) string {
	if len(s) <= maxConflictDiff {
		return s
	}
	return session.Cut(s, maxConflictDiff)
}
