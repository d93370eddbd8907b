package agent

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
)

// The attack: a fork taken in this kin while a rollback or an undo of the
// original is between its two records (Fork does not wait for the session's
// hold, which turns, rollbacks and undos take) copied the first record and
// not the outcome: the fork said "kin stopped before this rollback/undo
// finished" for ever, and a default fork (cut at the log's end) copied, for
// an undo, the turn's edits as standing while its files were put back. A
// fork now waits for a rollback or undo of the session running in this kin.
// (One running in another kin cannot be told from a killed one: the fork
// copies it unfinished, as a resume would show it.)
func TestAForkWaitsForARollbackOrUndoInProgress(t *testing.T) {
	for _, kind := range []string{"rollback", "undo"} {
		t.Run(kind, func(t *testing.T) {
			k := newKillWorld(t)
			svc, sid := k.svc, k.sid
			done := make(chan error, 1)
			var fork Opened
			mid := func() {
				go func() {
					var err error
					fork, err = svc.Fork(sid, "", nil)
					done <- err
				}()
				// A fork not waiting ends here, between the records.
				select {
				case err := <-done:
					done <- err
				case <-time.After(300 * time.Millisecond):
				}
			}
			if kind == "rollback" {
				svc.rollbackRestored = mid
				if _, err := svc.Rollback(t.Context(), sid, 1, nil); err != nil {
					t.Fatal(err)
				}
			} else {
				svc.undoRestored = mid
				if _, err := svc.Undo(t.Context(), sid, "", nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(k.target); string(b) != "before\n" {
				t.Fatalf("a.txt after the %s: %q", kind, b)
			}
			r, err := svc.Resume(fork.Info.SessionID, ResumeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range r.History {
				if h.Rollback != nil && len(h.Rollback.Errors) > 0 {
					t.Errorf("the fork's rollback item says %+v", h.Rollback.Errors)
				}
				if h.Undo != nil && h.Undo.Error != "" {
					t.Errorf("the fork's undo item says %q", h.Undo.Error)
				}
			}
			svc.rollbackRestored, svc.undoRestored = nil, nil
			k.m.Script(modeltest.Reply{Text: []string{"ok"}})
			ask(t, svc, k.rec, fork.Info.SessionID, TextInput("what is in a.txt?"))
			reqs := k.m.Requests()
			text := reqs[len(reqs)-1].Text()
			if strings.Contains(text, "kin stopped") {
				t.Errorf("the fork's model is told the %s may be unfinished:\n%s", kind, text)
			}
			if kind == "rollback" && strings.Contains(text, "I wrote a.txt") {
				t.Errorf("the fork's model sees the rolled-back turn:\n%s", text)
			}
		})
	}
}
