package session_test

import (
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// A kin that shows the session read-only says an unfinished undo or
// rollback may be running in the kin that has it, on a copy: the page it
// came from may be cached, and the owner's own resume must still say
// "kin stopped".
func TestOwnedElsewhereLeavesThePageAlone(t *testing.T) {
	items := []session.HistoryItem{
		{Type: session.TypeUndo, Undo: session.UnfinishedUndo(&session.Undo{TurnID: "t1"})},
		{Type: session.TypeRollback, Rollback: session.Unfinished([]string{"t2"})},
		{Type: session.TypeUndo, Undo: &session.Undo{TurnID: "t3", Restored: []string{"/w/a"}}},
	}
	got := session.OwnedElsewhere(items)
	if got[0].Undo.Error != session.UndoUnfinishedElsewhere || got[1].Rollback.Errors[0].Error != session.RollbackUnfinishedElsewhere || got[2].Undo != items[2].Undo {
		t.Errorf("read-only history %+v %+v %+v", got[0].Undo, got[1].Rollback, got[2].Undo)
	}
	if items[0].Undo.Error != session.UndoUnfinished || items[1].Rollback.Errors[0].Error != session.RollbackUnfinished {
		t.Errorf("the page itself changed: %+v %+v", items[0].Undo, items[1].Rollback)
	}
}
