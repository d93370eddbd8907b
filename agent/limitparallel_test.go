package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/settings"
)

// The attack: one answer asks for three delegate calls, which run side by
// side. Each subagent checked the spend limits against what was used
// before its first request; none of the others' requests was used yet
// (they were on their way), so all three passed, and together they sent
// about three times what the room under the limit allowed, without the
// person being asked. Each request now holds its estimated input against
// every limit it counts towards until its usage is counted: the first
// subagent fits, and the next ones are asked about (here the person says
// stop, so nothing more is sent).
func TestParallelSubagentsDoNotPassALimitTogether(t *testing.T) {
	// Each task is about 10,000 tokens (40,000 bytes at kin's four bytes
	// a token), so a subagent's first request is estimated at 10,000 to
	// 12,000 tokens with kin's instructions: the room under each limit
	// (16,000 after the parent's 100) holds one of them, not two.
	const task = 40_000
	for _, l := range []settings.Limits{{TurnTokens: 16_100}, {SessionTokens: 16_100}, {DayTokens: 16_100}} {
		name := "turn"
		if l.SessionTokens > 0 {
			name = "session"
		} else if l.DayTokens > 0 {
			name = "day"
		}
		t.Run(name, func(t *testing.T) {
			svc, m, rec, a, ws := limitService(t, t.TempDir(), l)
			sid := newSession(t, svc, ws)
			hold := make(chan struct{})
			var calls []modeltest.Call
			for i := range 3 {
				mark := fmt.Sprintf("subagent-%d ", i)
				args, _ := json.Marshal(map[string]string{"task": mark + strings.Repeat("x", task)})
				calls = append(calls, modeltest.Call{ID: fmt.Sprintf("d%d", i), Name: DelegateToolName, Arguments: string(args)})
				// Its usage is what it sent (about its estimate): a subagent
				// that checks only after another's answer was counted
				// must find no room either, as it would on a slow machine.
				m.Route(modeltest.FirstUser(mark), modeltest.Reply{Text: []string{"done " + mark}, Usage: modeltest.Usage{Input: 11_000, Output: 1}, Hold: hold})
			}
			m.Script(
				modeltest.Reply{Calls: calls, Usage: modeltest.Usage{Input: 100, Output: 1}},
				modeltest.Reply{Text: []string{"all done"}, Usage: modeltest.Usage{Input: 100, Output: 1}},
			)
			// The subagents' answers are held until every one of them
			// was sent, or the person was asked: all three are on their
			// way at once.
			go func() {
				defer close(hold)
				for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
					if len(m.Requests()) >= 4 || len(a.limits()) > 0 {
						return
					}
				}
			}()
			if _, err := svc.StartTurn(sid, TextInput("go"), nil); err != nil {
				t.Fatal(err)
			}
			var d TurnDone
			for d.SessionID != sid {
				d = waitDone(t, rec.events)
			}
			if n := len(m.Requests()); n != 2 {
				t.Errorf("%d requests sent, want 2 (the parent's and one subagent's): the others pass the limit together", n)
			}
			if qs := a.limits(); len(qs) == 0 {
				t.Errorf("the person was never asked about the %s limit", name)
			} else if !strings.Contains(qs[0].Title, "requests on their way add about") {
				t.Errorf("the question does not say what is on its way: %s", qs[0].Title)
			}
			if d.Status != TurnLimit {
				t.Errorf("the parent's turn ended %s (%s), want %s: the person said stop", d.Status, d.Error, TurnLimit)
			}
			// Every hold was let go: what is held would otherwise narrow
			// the limits for good.
			sp := svc.spend
			sp.mu.Lock()
			day := sp.dayHeld
			sp.mu.Unlock()
			if _, held := sp.of(sid).counted(); !held.Zero() || !day.Zero() {
				t.Errorf("still held: the session %+v, the day %+v", held, day)
			}
		})
	}
}
