package session

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
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

// RollbackStarted is the Status of a rollback's first record, written
// (and synced) before any file is put back: from it on the model no longer
// sees the turns it names. The outcome follows in a second record with the
// same turns. A log with the first and not the second is a rollback kin was
// stopped in (killed, or the machine lost power) while it put files back:
// its turns are out, and which of their files went back is not known.
const RollbackStarted = "started"

// RollbackUnfinished is what a rollback kin was stopped in says of each of
// its turns (Unfinished). Undo of such a turn puts back what is left: a
// file already as it was before the turn counts as put back.
const RollbackUnfinished = "kin stopped before this rollback finished: some of this turn's files may not be put back (undoing the turn puts back the rest)"

// Unfinished is a rollback whose outcome was never recorded, as kin tells
// it until the outcome comes (for good, when kin was stopped in it): its
// turns, each with the error RollbackUnfinished.
func Unfinished(turns []string) *Rollback {
	rb := &Rollback{Turns: turns}
	for _, t := range turns {
		rb.Errors = append(rb.Errors, RollbackError{TurnID: t, Error: RollbackUnfinished})
	}
	return rb
}

// ForkRef names where a forked session came from: the session, and the
// last turn it took from it.
type ForkRef struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
}

// Reader reads a session's log a record at a time, whoever owns it (what a
// fork copies from a session another kin may have open), so a long log is
// never held whole. Every pass reads the same open file: a session deleted
// meanwhile is still read to its end.
type Reader struct{ f *os.File }

// Reader opens a session's log for reading.
func (s *Store) Reader(id string) (*Reader, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return &Reader{f: f}, nil
}

// Each calls fn for every record whose line ends by end (end < 0: every
// record the log holds now), with the offset just past its line: a second
// pass up to an offset the first one found reads the same records, however
// much another kin appended since. The first error fn returns stops it.
// Lines that are not records (one still being written) are skipped.
func (r *Reader) Each(end int64, fn func(rec Record, next int64) error) error {
	if end < 0 {
		end = math.MaxInt64
	}
	// a section reader of its own: every pass starts at the log's start
	var ferr error
	var rec Record
	_, err := eachLine(io.NewSectionReader(r.f, 0, end), 0, func(off int64, line []byte) {
		if ferr == nil && parse(line, &rec) {
			ferr = fn(rec, off+int64(len(line)))
		}
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// Close closes the log.
func (r *Reader) Close() error { return r.f.Close() }

// rollback marks the page's items of the turns a rollback took out, and
// takes a rollback's outcome to the item of its first record, which shows
// it unfinished until then (rollbackItem); it reports whether r was such an
// outcome, which then has no item of its own.
func (p *pager) rollback(r Record) bool {
	p.markRolledBack(r.Rollback)
	if r.Rollback == nil {
		return false
	}
	return p.outcome(&p.rolling, r.Status == RollbackStarted, strings.Join(r.Rollback.Turns, "\x00"),
		func(h *HistoryItem) { h.Rollback = r.Rollback })
}

// rollbackItem is a rollback record's history item; k is its item number.
func (p *pager) rollbackItem(r Record, k int) HistoryItem {
	if r.Status == RollbackStarted && r.Rollback != nil {
		p.rolling.item = k
		return HistoryItem{Type: TypeRollback, Rollback: Unfinished(r.Rollback.Turns)}
	}
	return HistoryItem{Type: TypeRollback, Rollback: r.Rollback}
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
