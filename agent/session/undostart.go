package session

import "slices"

// UndoStarted is the Status of an undo's first record, written (and
// synced) before any file is put back; it names only the turn. The outcome
// follows in a second undo record of the same turn, without a Status. A
// log with the first and not the second is an undo kin was stopped in
// (killed, or the machine lost power) while it put files back: which of
// the turn's files went back is not known.
const UndoStarted = "started"

// UndoUnfinished is the Error of an undo kin was stopped in, as history
// shows it. Undoing the turn again puts back the rest: a file already as
// it was before the turn counts as put back.
const UndoUnfinished = "kin stopped before this undo finished: some of the turn's files may not be put back (undo the turn again to put back the rest)"

// UnfinishedUndo is an undo whose outcome was never recorded, as kin tells
// it until the outcome comes (for good, when kin was stopped in it).
func UnfinishedUndo(u *Undo) *Undo {
	return &Undo{TurnID: u.TurnID, Question: u.Question, Restored: []string{}, Error: UndoUnfinished}
}

// undo takes an undo's outcome to the item of its first record, which
// shows it unfinished until then (undoItem); it reports whether r was such
// an outcome, which then has no item of its own.
func (p *pager) undo(r Record) bool {
	if r.Undo == nil {
		return false
	}
	return p.outcome(&p.undoing, r.Status == UndoStarted, r.Undo.TurnID, func(h *HistoryItem) { h.Undo = r.Undo })
}

// undoItem is an undo record's history item; k is its item number.
func (p *pager) undoItem(r Record, k int) HistoryItem {
	if r.Status == UndoStarted && r.Undo != nil {
		p.undoing.item = k
		return HistoryItem{Type: TypeUndo, Undo: UnfinishedUndo(r.Undo)}
	}
	return HistoryItem{Type: TypeUndo, Undo: r.Undo}
}

// What a kin that shows the session read-only, because another kin has
// it open, says of an undo or a rollback without its outcome: that kin
// may still be in it, which cannot be told from one a stopped kin left.
const (
	UndoUnfinishedElsewhere     = "the kin that has this session open may still be putting this turn's files back, or a kin stopped before this undo finished (then some of the turn's files may not be put back: undo the turn again where the session is open)"
	RollbackUnfinishedElsewhere = "the kin that has this session open may still be putting this turn's files back, or a kin stopped before this rollback finished (then some of this turn's files may not be put back: undoing the turn where the session is open puts back the rest)"
)

// OwnedElsewhere is history as a kin that shows the session read-only
// (another kin has it open) tells it: an undo or rollback without its
// outcome may be running there (UndoUnfinishedElsewhere). items is not
// changed (a page may be cached).
func OwnedElsewhere(items []HistoryItem) []HistoryItem {
	var out []HistoryItem
	for i, it := range items {
		switch {
		case it.Undo != nil && it.Undo.Error == UndoUnfinished:
			u := *it.Undo
			u.Error = UndoUnfinishedElsewhere
			it.Undo = &u
		case it.Rollback != nil && slices.ContainsFunc(it.Rollback.Errors, func(e RollbackError) bool { return e.Error == RollbackUnfinished }):
			rb := *it.Rollback
			rb.Errors = slices.Clone(rb.Errors)
			for j := range rb.Errors {
				if rb.Errors[j].Error == RollbackUnfinished {
					rb.Errors[j].Error = RollbackUnfinishedElsewhere
				}
			}
			it.Rollback = &rb
		default:
			continue
		}
		if out == nil {
			out = slices.Clone(items)
		}
		out[i] = it
	}
	if out == nil {
		return items
	}
	return out
}
