package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/settings"
)

// The attack: a second kin (another editor window) resumes a session while
// the kin that has it open is between an undo's or a rollback's two
// records. The second kin shows the session read-only, and history said
// the undo or rollback was left by a kin that stopped ("undo the turn
// again"), while the owner was still putting files back. A read-only kin
// cannot tell one from the other: it says both may be.
func TestASecondKinSeesAnUndoOrRollbackInProgressAsMaybeRunning(t *testing.T) {
	for _, kind := range []string{"rollback", "undo"} {
		t.Run(kind, func(t *testing.T) {
			k := newKillWorld(t)
			svc, sid := k.svc, k.sid
			var seen Resumed
			mid := func() {
				svc2, _, _, _, _ := limitService(t, k.home, settings.Limits{})
				r, err := svc2.Resume(sid, ResumeOptions{})
				if err != nil {
					t.Error(err)
				}
				seen = r
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
			if !errors.Is(seen.ReadOnly, session.ErrOwned) {
				t.Fatalf("the second kin's session is not another kin's: %v", seen.ReadOnly)
			}
			var said []string
			for _, h := range seen.History {
				if h.Undo != nil && h.Undo.Error != "" {
					said = append(said, h.Undo.Error)
				}
				if h.Rollback != nil {
					for _, e := range h.Rollback.Errors {
						said = append(said, e.Error)
					}
				}
			}
			if len(said) != 1 || !strings.Contains(said[0], "may still be putting") {
				t.Errorf("the second kin says of the %s in progress: %q", kind, said)
			}
		})
	}
}
