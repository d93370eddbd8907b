package session

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestNewestFirstIsTheFullOrder: whichever way newestFirst takes (the
// rows as they are, a compacted copy, a sort of keys), it gives the rows
// newest first, ties by id descending, deleted rows left out, exactly as
// sorting whole rows by newer does.
func TestNewestFirstIsTheFullOrder(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var r rowSet
		n := 1 + rng.IntN(60)
		for k := range n {
			i := Info{SessionID: fmt.Sprintf("s_%03d", rng.IntN(80)), Title: fmt.Sprint(k)}
			switch rng.IntN(4) {
			case 0: // ties
				i.UpdatedAt = base
			case 1: // never changed: the zero time, the oldest
			default:
				i.UpdatedAt = base.Add(time.Duration(rng.IntN(20)) * time.Second)
			}
			if round%3 == 0 { // already in order: the ways that do not sort
				i.UpdatedAt = base.Add(-time.Duration(k) * time.Second)
			}
			r.put(i)
		}
		for range rng.IntN(4) {
			r.del(fmt.Sprintf("s_%03d", rng.IntN(80)))
		}
		var want []Info
		for _, i := range r.rows {
			if i.SessionID != "" {
				want = append(want, i)
			}
		}
		slices.SortFunc(want, func(a, b Info) int { return newer(&a, &b) })
		got := r.newestFirst()
		if len(got) != len(want) {
			t.Fatalf("round %d: %d rows, want %d", round, len(got), len(want))
		}
		for k := range want {
			if got[k].SessionID != want[k].SessionID || got[k].Title != want[k].Title || !got[k].UpdatedAt.Equal(want[k].UpdatedAt) {
				t.Fatalf("round %d, row %d: %s %v, want %s %v", round, k, got[k].SessionID, got[k].UpdatedAt, want[k].SessionID, want[k].UpdatedAt)
			}
		}
	}
}

// BenchmarkNewestFirst10000 is the sort a list needs when the journal is
// not newest first (turns ended since its last rewrite): 10,000 rows, a
// tenth of them moved to the top.
func BenchmarkNewestFirst10000(b *testing.B) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var r rowSet
	r.grow(10000)
	for k := range 10000 {
		t := base.Add(-time.Duration(k) * time.Second)
		if k%10 == 0 {
			t = base.Add(time.Duration(k) * time.Second)
		}
		r.add(Info{SessionID: fmt.Sprintf("s_20260101T000000_%06d", k), Title: "a session", Cwd: "/w", UpdatedAt: t})
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(r.newestFirst()) != 10000 {
			b.Fatal("rows lost")
		}
	}
}
