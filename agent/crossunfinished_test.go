package agent

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// The attack: kin is killed while it rolls a turn back, after the turn's
// checkpoint was noted undone and before the outcome. History then says
// of the turn "undoing the turn puts back the rest", but undoing it
// answered "nothing to undo": the checkpoint said undone, and only an
// unfinished undo (not an unfinished rollback) let a turn be undone again.
func TestUndoFinishesARollbackKinWasStoppedIn(t *testing.T) {
	k := newKillWorld(t)
	svc, sid := k.svc, k.sid
	svc.rollbackRestored = k.keep(t)
	rb, err := svc.Rollback(t.Context(), sid, 1, nil)
	if err != nil || len(rb.Undos) != 1 {
		t.Fatalf("rollback %+v, %v", rb, err)
	}
	// Someone puts a file back as the turn left it: the rest to put back.
	writeFile(t, k.target, "turn one\n")
	svc2, _, _ := k.reopen(t)
	u, err := svc2.Undo(t.Context(), sid, rb.Turns[0], nil)
	if err != nil || u.TurnID != rb.Turns[0] || !slices.Equal(u.Restored, rb.Undos[0].Restored) {
		t.Fatalf("undo of the turn the killed rollback took out: %+v, %v; want %v restored", u, err, rb.Undos[0].Restored)
	}
	if b, _ := os.ReadFile(k.target); string(b) != "before\n" {
		t.Errorf("a.txt after the undo: %q", b)
	}
	if _, err := svc2.Undo(t.Context(), sid, rb.Turns[0], nil); err == nil {
		t.Errorf("a second undo of %s: no error; the turn is undone", rb.Turns[0])
	}
}

// The attack: kin is killed while it undoes a turn (the checkpoint noted
// undone, the outcome not written); the next kin rolls that turn back. The
// rollback took the checkpoint for undone, put nothing back and said
// nothing of files: the turn's files stayed half put back, and the model
// and the person were told the rollback was clean. A rollback puts back
// the rest of an unfinished undo of its turns, as undoing again does.
func TestARollbackFinishesAnUndoKinWasStoppedIn(t *testing.T) {
	k := newKillWorld(t)
	svc, sid := k.svc, k.sid
	svc.undoRestored = k.keep(t)
	u, err := svc.Undo(t.Context(), sid, "", nil)
	if err != nil || len(u.Restored) != 1 {
		t.Fatalf("undo %+v, %v", u, err)
	}
	writeFile(t, k.target, "turn one\n")
	svc2, m2, rec2 := k.reopen(t)
	rb, err := svc2.Rollback(t.Context(), sid, 1, nil)
	if err != nil || len(rb.Undos) != 1 || !slices.Equal(rb.Undos[0].Restored, u.Restored) {
		t.Fatalf("rollback of the turn whose undo kin was stopped in: %+v, %v; want %v restored", rb, err, u.Restored)
	}
	if b, _ := os.ReadFile(k.target); string(b) != "before\n" {
		t.Errorf("a.txt after the rollback: %q", b)
	}
	// The model is no longer told the undo is unfinished: the rollback
	// finished it.
	m2.Script(modeltest.Reply{Text: []string{"ok"}})
	ask(t, svc2, rec2, sid, TextInput("what is in a.txt?"))
	if reqs := m2.Requests(); len(reqs) != 1 || strings.Contains(reqs[0].Text(), "kin stopped") {
		t.Errorf("after the rollback finished the undo, the model is told:\n%s", reqs[len(reqs)-1].Text())
	}
}
