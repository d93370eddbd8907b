package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/textdiff"
)

// maxConflictDiff bounds the diff a conflict shows.
const maxConflictDiff = 64 << 10

// Undo puts back every file the turn changed with kin's tools (turnID ""
// means the latest turn whose changes are not undone yet) and marks the
// turn undone. A file whose content is no longer what the turn left is not
// touched: it is a conflict, with the diff from what kin left to what is
// there now. The turn's commands are listed as not undoable.
func (s *Store) Undo(sessionID, turnID string) (session.Undo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, err := s.manifests(sessionID)
	if err != nil {
		return session.Undo{}, err
	}
	m, err := pick(ms, turnID)
	if err != nil {
		return session.Undo{}, err
	}
	out := session.Undo{TurnID: m.TurnID, Restored: []string{}, NotUndoable: m.Calls}
	for _, f := range m.Files {
		if c := s.restore(sessionID, f); c != nil {
			out.Conflicts = append(out.Conflicts, *c)
		} else {
			out.Restored = append(out.Restored, f.Path)
		}
	}
	now := time.Now().UTC()
	m.UndoneAt = &now
	dir, _ := s.turnDir(sessionID, m.TurnID)
	if err := s.save(dir, m); err != nil {
		return out, fmt.Errorf("the files were restored, but kin could not note that the turn is undone: %w", err)
	}
	return out, nil
}

// pick finds the turn to undo.
func pick(ms []manifest, turnID string) (manifest, error) {
	if turnID == "" {
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].UndoneAt == nil && len(ms[i].Files) > 0 {
				return ms[i], nil
			}
		}
		return manifest{}, ErrNothingToUndo
	}
	for _, m := range ms {
		if m.TurnID != turnID {
			continue
		}
		if m.UndoneAt != nil {
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
func (s *Store) restore(sessionID string, f file) *session.UndoConflict {
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
	cur, exists, err := current(f.Path)
	if err != nil {
		return conflict("kin could not read it: " + err.Error())
	}
	switch {
	case exists == f.Existed && (!exists || bytes.Equal(cur, old)):
		return nil // already as it was before the turn
	case !exists:
		return conflict("it was deleted since kin changed it; left as it is")
	case !bytes.Equal(cur, after):
		c := conflict("it was changed since kin changed it; left as it is (the diff shows the change since)")
		c.Diff, _ = cut(textdiff.Unified("kin's version", "now", string(after), string(cur)))
		return c
	}
	if !f.Existed {
		if err := os.Remove(f.Path); err != nil {
			return conflict("kin could not remove the file the turn created: " + err.Error())
		}
		return nil
	}
	if err := writeBack(f.Path, old); err != nil {
		return conflict("kin could not write it back: " + err.Error())
	}
	return nil
}

// current reads a file as it is now; a path that is no longer a regular
// file (a folder, a symlink put in its place) is an error, never followed.
func current(p string) ([]byte, bool, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, true, fmt.Errorf("%s is no longer a regular file", filepath.Base(p))
	}
	b, err := os.ReadFile(p)
	return b, true, err
}

// writeBack replaces p with data the way kin's tools write: a synced
// temporary file renamed over it, keeping p's permission bits.
func writeBack(p string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	return writeDurable(p, data, mode)
}

func cut(s string) (string, bool) {
	if len(s) <= maxConflictDiff {
		return s, false
	}
	return session.Cut(s, maxConflictDiff), true
}
