package checkpoint

import "github.com/kin-dev/kin/agent/session"

// NotUndoable lists the calls of a turn whose changes kin cannot undo (its
// commands), also for a turn that changed no file with kin's tools: a
// rollback reports them even when there is nothing to put back.
func (s *Store) NotUndoable(sessionID, turnID string) ([]session.NotUndoable, error) {
	dir, err := s.turnDir(sessionID, turnID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load(dir)
	if err != nil {
		return nil, err
	}
	return m.Calls, nil
}
