package session

import "slices"

// Plans follows which plan is in force as a log's records come: the latest
// plan of a turn the model still sees. A rollback takes its turns' plans
// out with them (the model no longer sees the update_plan calls that made
// them, so /plan must not show them either), and the plan before them is in
// force again. The view of a log and a session's live conversation both
// feed it every record, so a kin that restarts shows the plan the live one
// did. The zero value is ready.
type Plans struct {
	// byTurn is each turn's last plan, oldest turn first: one entry a turn,
	// since a rollback takes whole turns.
	byTurn []turnPlan
	// seq numbers the turns in the order they first appear (what a
	// compaction's FromTurn is placed by); n is the next number.
	seq map[string]int
	n   int
}

type turnPlan struct {
	turn    string
	seq     int
	entries []PlanEntry
}

// Add takes one more record of the log (every record: their turns place
// a compaction's FromTurn).
func (p *Plans) Add(r Record) {
	if r.TurnID != "" {
		if p.seq == nil {
			p.seq = map[string]int{}
		}
		if _, ok := p.seq[r.TurnID]; !ok {
			p.seq[r.TurnID] = p.n
			p.n++
		}
	}
	switch r.Type {
	case TypePlan:
		if last := len(p.byTurn) - 1; last >= 0 && p.byTurn[last].turn == r.TurnID {
			p.byTurn[last].entries = r.Entries
			return
		}
		p.byTurn = append(p.byTurn, turnPlan{turn: r.TurnID, seq: p.seq[r.TurnID], entries: r.Entries})
	case TypeRollback:
		if r.Rollback != nil {
			p.byTurn = slices.DeleteFunc(p.byTurn, func(t turnPlan) bool { return t.turn != "" && slices.Contains(r.Rollback.Turns, t.turn) })
		}
	case TypeCompaction:
		// Turns a summary covers can no longer be rolled back: of their
		// plans only the latest can come back in force. The turns kept
		// whole (from FromTurn on) can still be taken out, with theirs.
		from := p.n
		if at, ok := p.seq[r.FromTurn]; ok && r.FromTurn != "" {
			from = at
		}
		kept := slices.IndexFunc(p.byTurn, func(t turnPlan) bool { return t.seq >= from })
		if kept < 0 {
			kept = len(p.byTurn)
		}
		if kept > 1 {
			p.byTurn = slices.Delete(p.byTurn, 0, kept-1)
		}
		for t, at := range p.seq {
			if at < from {
				delete(p.seq, t)
			}
		}
	}
}

// Current is the plan in force (nil when none is).
func (p *Plans) Current() []PlanEntry {
	if len(p.byTurn) == 0 {
		return nil
	}
	return p.byTurn[len(p.byTurn)-1].entries
}
