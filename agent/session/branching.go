package session

import (
	"fmt"
	"slices"
)

// Rollback is what a turn/rollback did: the turns that left the
// conversation the model sees (newest first; the log keeps them), and what
// undoing their file changes did, turn by turn (only turns that had
// changes to undo).
type Rollback struct {
	Turns []string `json:"turns"`
	Undos []Undo   `json:"undos,omitempty"`
	// Errors says, per turn, why its changes could not be looked at or
	// put back at all (a checkpoint that could not be read).
	Errors []RollbackError `json:"errors,omitempty"`
}

// RollbackError is a turn whose file changes a rollback could not undo.
type RollbackError struct {
	TurnID string `json:"turnId"`
	Error  string `json:"error"`
}

// ForkRef names where a forked session came from: the session, and the
// last turn it took from it.
type ForkRef struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
}

// Records reads every record of a session's log, whoever owns it (what a
// spend limit sums: the turns' usage; what a fork
// copies from a session another kin may have open: appends are whole
// lines, and a line still being written is skipped).
func (s *Store) Records(id string) ([]Record, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	recs, _, err := ReadRecords(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return recs, nil
}

// markRolledBack marks the page's items of the turns a rollback took out.
func (p *pager) markRolledBack(rb *Rollback) {
	if rb == nil || p.limit <= 0 {
		return
	}
	for k := max(0, p.n-p.limit); k < p.n; k++ {
		it := &p.ring[k%p.limit]
		if it.item.TurnID != "" && slices.Contains(rb.Turns, it.item.TurnID) {
			it.item.RolledBack = true
		}
	}
}
