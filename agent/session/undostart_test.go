package session_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// An undo writes its first record (the turn, before any file goes back)
// and then its outcome. History shows one undo item: the outcome, at the
// first record's place, on every page, whichever side of a page's cursor
// the outcome lies; a first record without an outcome (kin was stopped in
// the undo) shows the error UndoUnfinished; and a log from before first
// records (the outcome alone) reads as it did.
func TestAnUndoShowsOnceAndAnUnfinishedOneSaysSo(t *testing.T) {
	done := &session.Undo{TurnID: "t2", Question: "two", Restored: []string{"/w/b.go"}}
	st, id := sessionLog(t, []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "one"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "completed"},
		// an old kin's undo: the outcome alone
		{Type: session.TypeUndo, Undo: &session.Undo{TurnID: "t1", Restored: []string{"/w/a.go"}}},
		{Type: session.TypeUser, TurnID: "t2", Text: "two"},
		{Type: session.TypeTurn, TurnID: "t2", Status: "completed"},
		{Type: session.TypeUndo, Status: session.UndoStarted, Undo: &session.Undo{TurnID: "t2", Question: "two", Restored: []string{}}},
		{Type: session.TypeMode, Mode: "auto-edit"},
		{Type: session.TypeUndo, Undo: done},
		{Type: session.TypeUser, TurnID: "t3", Text: "three"},
		{Type: session.TypeTurn, TurnID: "t3", Status: "completed"},
		// kin was stopped here, before the outcome
		{Type: session.TypeUndo, Status: session.UndoStarted, Undo: &session.Undo{TurnID: "t3", Question: "three", Restored: []string{}}},
	})

	v, err := st.View(id, session.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var us []*session.Undo
	for _, it := range v.Page().Items {
		if it.Type == session.TypeUndo {
			us = append(us, it.Undo)
		}
	}
	if len(us) != 3 {
		t.Fatalf("%d undo items, want 3 (one per undo)", len(us))
	}
	if us[0].TurnID != "t1" || len(us[0].Restored) != 1 || us[0].Error != "" {
		t.Errorf("the old kin's undo: %+v", us[0])
	}
	if us[1].TurnID != "t2" || len(us[1].Restored) != 1 || us[1].Error != "" {
		t.Errorf("a finished undo shows %+v, want its outcome", us[1])
	}
	if us[2].TurnID != "t3" || us[2].Question != "three" || us[2].Error != session.UndoUnfinished || us[2].Restored == nil {
		t.Errorf("the undo kin was stopped in shows %+v, want t3 said to be unfinished", us[2])
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
	if last := items[len(items)-1]; last.Type != session.TypeUndo || last.Undo.TurnID != "t2" {
		t.Fatalf("the older page ends with %+v, not t2's undo", last)
	}
	if last := items[len(items)-1].Undo; len(last.Restored) != 1 || last.Error != "" {
		t.Errorf("an older page shows the finished undo as %+v", last)
	}
}
