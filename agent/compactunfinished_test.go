package agent

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
)

// A compaction in the kin that resumed a log with an undo or a rollback
// kin was stopped in: the summary takes the unfinished note in, and
// undoing the turn afterwards still finishes it (what the log says of the
// turn is kept through the compaction), with the model told the outcome
// and no longer that the undo is unfinished.
func TestACompactionKeepsAnUnfinishedUndoOrRollbackFinishable(t *testing.T) {
	for _, kind := range []string{"rollback", "undo"} {
		t.Run(kind, func(t *testing.T) {
			k := newKillWorld(t)
			svc, sid := k.svc, k.sid
			var restored []string
			if kind == "rollback" {
				svc.rollbackRestored = k.keep(t)
				rb, err := svc.Rollback(t.Context(), sid, 1, nil)
				if err != nil || len(rb.Undos) != 1 {
					t.Fatalf("rollback %+v, %v", rb, err)
				}
				restored = rb.Undos[0].Restored
			} else {
				svc.undoRestored = k.keep(t)
				u, err := svc.Undo(t.Context(), sid, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				restored = u.Restored
			}
			writeFile(t, k.target, "turn one\n")
			svc2, m2, rec2 := k.reopen(t)
			m2.Script(modeltest.Reply{Text: []string{"fine"}})
			ask(t, svc2, rec2, sid, TextInput("anything else?"))
			m2.Script(modeltest.Reply{Text: []string{"SUMMARY: a.txt was written; kin stopped while putting files back"}})
			if ok, err := svc2.Compact(t.Context(), sid, nil); err != nil || !ok {
				t.Fatalf("compact: %v, %v", ok, err)
			}
			u, err := svc2.Undo(t.Context(), sid, "", nil)
			if err != nil || !slices.Equal(u.Restored, restored) {
				t.Fatalf("undo after the compaction: %+v, %v; want %v restored", u, err, restored)
			}
			if b, _ := os.ReadFile(k.target); string(b) != "before\n" {
				t.Errorf("a.txt: %q", b)
			}
			m2.Script(modeltest.Reply{Text: []string{"ok"}})
			ask(t, svc2, rec2, sid, TextInput("what now?"))
			reqs := m2.Requests()
			if text := reqs[len(reqs)-1].Text(); !strings.Contains(text, "undid the file changes") {
				t.Errorf("the model is not told of the undo:\n%s", text)
			}
		})
	}
}
