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
}

type turnPlan struct {
	turn    string
	entries []PlanEntry
}

// Add takes one more record of the log.
func (p *Plans) Add(r Record) {
	switch r.Type {
	case TypePlan:
		if last := len(p.byTurn) - 1; last >= 0 && p.byTurn[last].turn == r.TurnID {
			p.byTurn[last].entries = r.Entries
			return
		}
		p.byTurn = append(p.byTurn, turnPlan{turn: r.TurnID, entries: r.Entries})
	case TypeRollback:
		if r.Rollback != nil {
			p.byTurn = slices.DeleteFunc(p.byTurn, func(t turnPlan) bool { return t.turn != "" && slices.Contains(r.Rollback.Turns, t.turn) })
		}
	case TypeCompaction:
		// Turns a summary covers can no longer be rolled back: of their
		// plans only the latest can come back in force. FromTurn's (kept
		// whole) can still be taken out.
		keep := len(p.byTurn) - 1
		if keep > 0 && r.FromTurn != "" && p.byTurn[keep].turn == r.FromTurn {
			keep--
		}
		if keep > 0 {
			p.byTurn = slices.Delete(p.byTurn, 0, keep)
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
