package session_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// A rollback writes its first record (the turns, before any file goes
// back) and then its outcome. History shows one rollback item: the
// outcome, at the first record's place, on every page, whichever side of
// a page's cursor the outcome lies; a first record without an outcome (kin
// was stopped in the rollback) shows each turn as possibly not put back;
// and a log from before first records (the outcome alone) reads as it did.
func TestARollbackShowsOnceAndAnUnfinishedOneSaysSo(t *testing.T) {
	done := &session.Rollback{Turns: []string{"t3"}, Undos: []session.Undo{{TurnID: "t3", Restored: []string{"/w/c.go"}}}}
	st, id := sessionLog(t, []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "one"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "completed"},
		{Type: session.TypeUser, TurnID: "t2", Text: "two"},
		{Type: session.TypeTurn, TurnID: "t2", Status: "completed"},
		// an old kin's rollback: the outcome alone
		{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t2"}}},
		{Type: session.TypeUser, TurnID: "t3", Text: "three"},
		{Type: session.TypeTurn, TurnID: "t3", Status: "completed"},
		{Type: session.TypeRollback, Status: session.RollbackStarted, Rollback: &session.Rollback{Turns: []string{"t3"}}},
		{Type: session.TypeMode, Mode: "auto-edit"},
		{Type: session.TypeRollback, Rollback: done},
		{Type: session.TypeUser, TurnID: "t4", Text: "four"},
		{Type: session.TypeTurn, TurnID: "t4", Status: "completed"},
		// kin was stopped here, before the outcome
		{Type: session.TypeRollback, Status: session.RollbackStarted, Rollback: &session.Rollback{Turns: []string{"t4"}}},
	})

	v, err := st.View(id, session.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var rbs []*session.Rollback
	for _, it := range v.Page().Items {
		if it.Type == session.TypeRollback {
			rbs = append(rbs, it.Rollback)
		}
		if rolled := it.TurnID != "t1" && it.TurnID != ""; it.RolledBack != rolled {
			t.Errorf("%s of %s: rolledBack=%v", it.Type, it.TurnID, it.RolledBack)
		}
	}
	if len(rbs) != 3 {
		t.Fatalf("%d rollback items, want 3 (one per rollback)", len(rbs))
	}
	if rbs[0].Turns[0] != "t2" || len(rbs[0].Errors) != 0 {
		t.Errorf("the old kin's rollback: %+v", rbs[0])
	}
	if rbs[1] == nil || len(rbs[1].Undos) != 1 || len(rbs[1].Errors) != 0 {
		t.Errorf("a finished rollback shows %+v, want its outcome", rbs[1])
	}
	if rbs[2] == nil || len(rbs[2].Errors) != 1 || rbs[2].Errors[0].TurnID != "t4" || rbs[2].Errors[0].Error != session.RollbackUnfinished {
		t.Errorf("the rollback kin was stopped in shows %+v, want t4 said to be unfinished", rbs[2])
	}

	// A page whose cursor lies between the first record and the outcome
	// shows the outcome all the same.
	full, err := st.View(id, session.Query{Limit: 4}) // from the mode item on
	if err != nil {
		t.Fatal(err)
	}
	older, err := st.View(id, session.Query{Limit: 100, Before: full.Page().Cursor})
	if err != nil {
		t.Fatal(err)
	}
	items := older.Page().Items
	if last := items[len(items)-1]; last.Type != session.TypeRollback {
		t.Fatalf("the older page ends with %s, not the rollback's first record", last.Type)
	}
	var found bool
	for _, it := range items {
		if it.Type == session.TypeRollback && len(it.Rollback.Turns) == 1 && it.Rollback.Turns[0] == "t3" {
			found = true
			if len(it.Rollback.Undos) != 1 || len(it.Rollback.Errors) != 0 {
				t.Errorf("an older page shows the finished rollback as %+v", it.Rollback)
			}
		}
	}
	if !found {
		t.Errorf("the older page does not hold t3's rollback: %+v", older.Page().Items)
	}
}

// sessionLog is a store holding one session whose log is recs, closed.
func sessionLog(t *testing.T, recs []session.Record) (*session.Store, string) {
	t.Helper()
	st := session.NewStore(t.TempDir())
	info, log, err := st.Create("x", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range recs {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return st, info.SessionID
}
