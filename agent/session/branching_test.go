package session_test

import (
	"fmt"
	"testing"

	"github.com/kin-dev/kin/agent/session"
)

// Attack: a rolled-back turn long enough to span two pages of history.
// The page that holds the rollback record marked its items as rolled
// back, but an older page (session/resume with before) skipped the
// rollback record with everything after its cursor, so scrolling up the
// editor showed the same turn's first items as still in the conversation
// the model sees. Every page marks the items of a rollback's turns,
// wherever the rollback record lies.
func TestEveryPageMarksTheTurnsARollbackTookOut(t *testing.T) {
	st := session.NewStore(t.TempDir())
	info, log, err := st.Create("x", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log.Append(session.Record{Type: session.TypeUser, TurnID: "t1", Text: "kept"})
	log.Append(session.Record{Type: session.TypeTurn, TurnID: "t1", Status: "completed"})
	log.Append(session.Record{Type: session.TypeUser, TurnID: "t2", Text: "taken back"})
	for i := 0; i < 6; i++ {
		log.Append(session.Record{Type: session.TypeAssist, TurnID: "t2", Text: fmt.Sprint("answer ", i)})
	}
	log.Append(session.Record{Type: session.TypeTurn, TurnID: "t2", Status: "completed"})
	log.Append(session.Record{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t2"}}})
	log.Close()

	cursor := ""
	pages := 0
	for {
		v, err := st.View(info.SessionID, session.Query{Limit: 3, Before: cursor})
		if err != nil {
			t.Fatal(err)
		}
		p := v.Page()
		for _, it := range p.Items {
			if want := it.TurnID == "t2"; it.RolledBack != want {
				t.Errorf("page %d (before %q): %s %q of %s rolledBack=%v", pages, cursor, it.Type, it.Text, it.TurnID, it.RolledBack)
			}
		}
		pages++
		if p.Cursor == "" {
			break
		}
		cursor = p.Cursor
	}
	if pages < 3 {
		t.Fatalf("%d pages: the turn does not span pages", pages)
	}
}
