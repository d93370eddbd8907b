package session

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestAListHandedOutNeverChanges: a cold list of a journal written newest
// first hands out the index's own rows (no copy); the changes that follow
// (a turn, a rename, a delete, a new session) must show in the next list
// and never in the one handed out, which callers read without the lock.
func TestAListHandedOutNeverChanges(t *testing.T) {
	dir := t.TempDir()
	st := NewStore(dir)
	var logs []*Log
	for k := range 4 {
		_, log, err := st.Create(fmt.Sprintf("s%d", k), []string{"/w"}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		logs = append(logs, log)
		time.Sleep(time.Millisecond) // distinct times: an order to check
	}
	st.idx.mu.Lock()
	st.idx.rewrite() // the snapshot a rebuild leaves: newest first
	st.idx.mu.Unlock()

	cold := NewStore(dir)
	first, err := cold.List()
	if err != nil || len(first) != 4 {
		t.Fatal(len(first), err)
	}
	if &first[0] != &cold.idx.rows.rows[0] {
		t.Fatal("a journal written newest first was copied: the cold list pays for it")
	}
	if cap(first) != len(first) {
		t.Fatalf("the list handed out has room (cap %d) an append would share with the index", cap(first))
	}
	want := append([]Info(nil), first...)

	// A reader of the handed-out list while the index changes: the race
	// detector fails the test if a change writes into it.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			for k := range first {
				_ = first[k].Turns + len(first[k].Title)
			}
		}
	}()
	if _, _, err := logs[0].Append(Record{Type: TypeTurn, TurnID: "t_1", Status: "completed", Time: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := logs[3].Append(Record{Type: TypeTitle, Title: "renamed", Time: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	second, _ := cold.List()
	if err := logs[1].Delete(); err != nil {
		t.Fatal(err)
	}
	third, _ := cold.List()
	_, extra, err := st.Create("s4", []string{"/w"}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	fourth, _ := cold.List()
	wg.Wait()

	for k := range want {
		if !sameInfo(first[k], want[k]) {
			t.Fatalf("the list handed out changed at %d: %+v, was %+v", k, first[k], want[k])
		}
	}
	// The rename came last, then the turn: both rows move to the top.
	if len(second) != 4 || second[0].SessionID != logs[3].id || second[0].Title != "renamed" ||
		second[1].SessionID != logs[0].id || second[1].Turns != 1 {
		t.Fatalf("after a turn and a rename: %+v", second)
	}
	if len(third) != 3 || len(fourth) != 4 || fourth[0].Title != "s4" {
		t.Fatalf("after a delete %+v, after a new session %+v", third, fourth)
	}
}

func sameInfo(a, b Info) bool {
	return a.SessionID == b.SessionID && a.Title == b.Title && a.Turns == b.Turns &&
		a.UpdatedAt.Equal(b.UpdatedAt) && a.Cwd == b.Cwd
}
