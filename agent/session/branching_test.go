package session_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
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

// Attack: a call's result recorded after a later turn ended (an MCP task
// that a restarted kin followed, a subagent's delegate call closed late).
// The view took the last turn-bound record's turn for the open one, so
// the next kin to open the session "closed" that long-ended turn again:
// a second end record, failed with "kin stopped during this turn", shown
// to the person and counted as one more turn.
func TestALateResultDoesNotReopenItsEndedTurn(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	info, log, err := st.Create("x", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "run the job"},
		{Type: session.TypeCall, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job"},
		{Type: session.TypeDecision, TurnID: "t1", CallID: "j1", Decision: "allow_once"},
		{Type: session.TypeTask, TurnID: "t1", CallID: "j1", Server: "jobs", TaskID: "task-1"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "failed", Error: session.StoppedDuringTurn},
		{Type: session.TypeUser, TurnID: "t2", Text: "meanwhile"},
		{Type: session.TypeTurn, TurnID: "t2", Status: "completed"},
		{Type: session.TypeResult, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Status: "completed", Output: "done"},
	} {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	v, err := st.View(info.SessionID, session.Query{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if open := v.OpenTurn(); open != "" {
		t.Errorf("open turn %q after every turn ended", open)
	}
	if r := v.Repairs(); len(r) != 0 {
		t.Errorf("repairs of a session nothing left open: %+v", r)
	}
	if v.Info.Turns != 2 {
		t.Errorf("%d turns", v.Info.Turns)
	}
	// A turn kin stopped during, with a late result recorded in it, is
	// the one left open (it was never closed: the repair went to t1).
	log, err = st.Open(info.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	log.Append(session.Record{Type: session.TypeUser, TurnID: "t3", Text: "cut short"})
	log.Append(session.Record{Type: session.TypeResult, TurnID: "t1", CallID: "j2", Status: "completed"})
	log.Close()
	if v, _ = st.View(info.SessionID, session.Query{}); v.OpenTurn() != "t3" {
		t.Errorf("open turn %q, want t3", v.OpenTurn())
	}
}

// What a kin stopped while writing a fork left (a hidden part, see
// Store.CreateWith) goes when a list next looks at the folder; a part a
// kin still writes (it holds the lock) stays, and neither is a session.
func TestAStalePartOfAForkIsRemoved(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	if _, err := st.List(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, ".s_20260101T000000_aaaaaa.jsonl.part")
	held := filepath.Join(dir, ".s_20260101T000000_bbbbbb.jsonl.part")
	for _, p := range []string{stale, held} {
		if err := os.WriteFile(p, []byte(`{"type":"session","sessionId":"x"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour)
		os.Chtimes(p, old, old)
	}
	f, err := os.OpenFile(held, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockedfile.TryLock(f); err != nil {
		t.Fatal(err)
	}
	list, err := session.NewStore(dir).List()
	if err != nil || len(list) != 0 {
		t.Fatalf("list %v, %v", list, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale part stays: %v", err)
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the part a kin holds went: %v", err)
	}
}

// Attack: a session log copied in from elsewhere (or edited) whose first
// record names a parent with a line break in its id. Summarising the log
// for the index wrote that id into the index's journal as it was, so the
// log could add lines of its own: here a row for a session that does not
// exist, and the deletion of another session's row.
func TestAPlantedParentIDCannotWriteTheIndex(t *testing.T) {
	dir := t.TempDir()
	st := session.NewStore(dir)
	victim, log, err := st.Create("victim", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log.Close()
	evil := "s_20260101T000000_e0e0e0"
	parent := "s_p\nr\ts_20260101T000000_f4f4f4\t1\t1\t0\t\"\"\t\"forged\"\nd\t" + victim.SessionID
	line := `{"type":"session","time":"2026-01-01T00:00:00Z","sessionId":"` + evil + `","title":"planted","parent":{"sessionId":` + strconv.Quote(parent) + `,"turnId":"t","callId":"c","depth":1}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, evil+".jsonl"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(dir, later, later)
	if _, err := session.NewStore(dir).List(); err != nil {
		t.Fatal(err)
	}
	list, err := session.NewStore(dir).List() // a fresh kin replays the journal
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, in := range list {
		seen[in.SessionID] = in.Title
	}
	if _, ok := seen["s_20260101T000000_f4f4f4"]; ok {
		t.Errorf("the planted log added a row: %v", seen)
	}
	if _, ok := seen[victim.SessionID]; !ok {
		t.Errorf("the planted log removed a session from the list: %v", seen)
	}
}
