package agent

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
)

// The attack: kin is killed (SIGKILL, power loss, the editor ending it)
// while it undoes a turn, after it put the turn's files back and before it
// recorded the undo. The kin that opens the session next sent the model
// the turn's edits as standing over files that were put back, history
// showed no undo, and the person (whose editor lost kin) was told nothing.
// An undo now records that it started before any file is touched: a
// killed undo reads as unfinished, to the model and in history, and
// undoing the turn again (even by "the latest turn") finishes it.
func TestAnUndoKilledAfterPuttingFilesBackSaysItIsUnfinished(t *testing.T) {
	k := newKillWorld(t)
	svc, sid, target := k.svc, k.sid, k.target
	svc.undoRestored = k.keep(t)
	u, err := svc.Undo(t.Context(), sid, "", nil)
	if err != nil || len(u.Restored) != 1 {
		t.Fatalf("undo %+v, %v", u, err)
	}
	turn := u.TurnID
	if b, _ := os.ReadFile(target); string(b) != "before\n" {
		t.Fatalf("a.txt after the undo: %q", b)
	}
	svc2, m2, rec2 := k.reopen(t)
	undos := func() []*session.Undo {
		t.Helper()
		r, err := svc2.Resume(sid, ResumeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []*session.Undo
		for _, h := range r.History {
			if h.Type == session.TypeUndo {
				out = append(out, h.Undo)
			}
		}
		return out
	}
	if got := undos(); len(got) != 1 || got[0] == nil || got[0].TurnID != turn || !strings.Contains(got[0].Error, "kin stopped") {
		t.Errorf("history's undo items %+v; want one of turn %s, with an error saying kin stopped before the undo finished", got, turn)
	}
	m2.Script(modeltest.Reply{Text: []string{"ok"}})
	ask(t, svc2, rec2, sid, TextInput("what is in a.txt?"))
	reqs := m2.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	if text := reqs[0].Text(); !strings.Contains(text, "kin stopped while it put its files back") || !strings.Contains(text, turn) {
		t.Errorf("the model is not told the undo of %s may be unfinished:\n%s", turn, text)
	}

	// Undoing again (the latest turn, as /undo does) finishes it: the file
	// already as before the turn counts as put back.
	u2, err := svc2.Undo(t.Context(), sid, "", nil)
	if err != nil || u2.TurnID != turn || !slices.Equal(u2.Restored, u.Restored) || len(u2.Conflicts) != 0 || u2.Error != "" {
		t.Fatalf("undo again: %+v, %v; want turn %s with %v restored", u2, err, turn, u.Restored)
	}
	got := undos()
	if len(got) != 2 || got[0].Error == "" || got[1].Error != "" || !slices.Equal(got[1].Restored, u.Restored) {
		t.Errorf("history's undo items after undoing again: %+v", got)
	}
	if _, err := svc2.Undo(t.Context(), sid, turn, nil); err == nil {
		t.Errorf("a third undo of %s: no error; the turn is undone", turn)
	}
}

// What the model is told of an undo written in two records: while only the
// first is there, that its files may be only partly put back; once the
// outcome comes, the outcome's note alone. The sizes kept stay those of
// the items.
func TestConvoUndoStartThenOutcome(t *testing.T) {
	base := []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "first"},
		{Type: session.TypeTurn, TurnID: "t1", Status: TurnCompleted},
	}
	start := session.Record{Type: session.TypeUndo, Status: session.UndoStarted, Undo: &session.Undo{TurnID: "t1", Restored: []string{}}}
	outcome := session.Record{Type: session.TypeUndo, Undo: &session.Undo{TurnID: "t1", Restored: []string{"/w/a.go"}}}
	notes := func(recs ...session.Record) []string {
		c := newConvo()
		for _, r := range append(slices.Clone(base), recs...) {
			c.add(r, 0, 0)
		}
		var text, out int
		for _, it := range c.items {
			a, b := itemSize(it)
			text, out = text+a, out+b
		}
		if text != c.textBytes || out != c.outBytes {
			t.Errorf("sizes kept %d+%d, items' %d+%d", c.textBytes, c.outBytes, text, out)
		}
		var got []string
		for _, it := range c.model(nil, view{budget: ContextBudget}) {
			if strings.HasPrefix(it.Text, "[kin:") {
				got = append(got, it.Text)
			}
		}
		return got
	}
	if got := notes(start); len(got) != 1 || !strings.Contains(got[0], "kin stopped while it put its files back") {
		t.Errorf("an undo without its outcome: notes %q", got)
	}
	if got := notes(start, outcome); len(got) != 1 || strings.Contains(got[0], "kin stopped") || !strings.Contains(got[0], "/w/a.go") {
		t.Errorf("a finished undo: notes %q", got)
	}
	// Stopped once, then undone again: the first stays unfinished.
	if got := notes(start, start, outcome); len(got) != 2 || !strings.Contains(got[0], "kin stopped") || strings.Contains(got[1], "kin stopped") {
		t.Errorf("an undo stopped, then done again: notes %q", got)
	}
	// A log from before first records.
	if got := notes(outcome); len(got) != 1 || !strings.Contains(got[0], "/w/a.go") {
		t.Errorf("an old kin's undo: notes %q", got)
	}
}
