package session

import "testing"

func plan(turn, step string) Record {
	return Record{Type: TypePlan, TurnID: turn, Entries: []PlanEntry{{Content: step, Status: "pending"}}}
}

func step(p []PlanEntry) string {
	if len(p) != 1 {
		return ""
	}
	return p[0].Content
}

// A rollback brings back the plan of the newest turn it leaves; a
// compaction keeps what a later rollback of its kept turn needs, and no
// more.
func TestPlansFollowRollbacksAndCompactions(t *testing.T) {
	var p Plans
	for _, r := range []Record{plan("t1", "a"), plan("t2", "b"), plan("t2", "b2"), plan("t3", "c")} {
		p.Add(r)
	}
	p.Add(Record{Type: TypeRollback, Rollback: &Rollback{Turns: []string{"t3"}}})
	if got := step(p.Current()); got != "b2" {
		t.Fatalf("after rolling back t3: %q, want t2's last plan b2", got)
	}
	p.Add(plan("t4", "d"))
	p.Add(Record{Type: TypeCompaction, FromTurn: "t4"})
	if len(p.byTurn) != 2 {
		t.Errorf("a compaction kept %d turns' plans, want 2 (t2's and the kept t4's)", len(p.byTurn))
	}
	p.Add(Record{Type: TypeRollback, Rollback: &Rollback{Turns: []string{"t4"}}})
	if got := step(p.Current()); got != "b2" {
		t.Errorf("after rolling back the kept turn: %q, want b2", got)
	}
	p.Add(Record{Type: TypeCompaction})
	p.Add(Record{Type: TypeRollback, Rollback: &Rollback{Turns: []string{"t5"}}})
	if got := step(p.Current()); got != "b2" || len(p.byTurn) != 1 {
		t.Errorf("after a compaction of everything: %q (%d kept)", got, len(p.byTurn))
	}
}

// A compaction that keeps the last turns whole (FromTurn is the first of
// them) keeps their plans, so rolling them back one by one brings each
// earlier plan back, as the live conversation would.
func TestPlansKeepTheTurnsACompactionKeeps(t *testing.T) {
	var p Plans
	for _, r := range []Record{
		{Type: TypeUser, TurnID: "t1"}, plan("t1", "a"),
		{Type: TypeUser, TurnID: "t2"}, plan("t2", "b"),
		{Type: TypeUser, TurnID: "t3"},
		{Type: TypeUser, TurnID: "t4"}, plan("t4", "d"),
		{Type: TypeUser, TurnID: "t5"}, plan("t5", "e"),
		{Type: TypeCompaction, FromTurn: "t3"},
	} {
		p.Add(r)
	}
	for _, c := range []struct{ turn, want string }{{"t5", "d"}, {"t4", "b"}, {"t3", "b"}} {
		p.Add(Record{Type: TypeRollback, Rollback: &Rollback{Turns: []string{c.turn}}})
		if got := step(p.Current()); got != c.want {
			t.Errorf("after rolling back %s: %q, want %q", c.turn, got, c.want)
		}
	}
	if len(p.byTurn) != 1 || len(p.seq) != 3 {
		t.Errorf("kept %d plans and %d turns' places; want t2's plan, and t3..t5", len(p.byTurn), len(p.seq))
	}
}

// A second pass of a Reader up to the offset the first one found reads the
// same records, though another kin appended (and was writing a line) in
// between: what a fork copies is what it looked at.
func TestReaderPassesStopWhereTheFirstEnded(t *testing.T) {
	st := NewStore(t.TempDir())
	info, log, err := st.Create("", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range []Record{{Type: TypeUser, TurnID: "t1", Text: "a"}, {Type: TypeTurn, TurnID: "t1", Status: "completed"}} {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	rd, err := st.Reader(info.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var end int64
	n := 0
	if err := rd.Each(-1, func(_ Record, next int64) error { n, end = n+1, next; return nil }); err != nil || n != 3 {
		t.Fatalf("first pass: %d records, %v", n, err)
	}
	if _, _, err := log.Append(Record{Type: TypeUser, TurnID: "t2", Text: "b"}); err != nil {
		t.Fatal(err)
	}
	m := 0
	if err := rd.Each(end, func(r Record, _ int64) error {
		m++
		if r.TurnID == "t2" {
			t.Error("the second pass read a record appended after the first")
		}
		return nil
	}); err != nil || m != n {
		t.Errorf("second pass: %d records, want %d (%v)", m, n, err)
	}
}
