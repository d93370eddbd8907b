package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
)

// The attack: a prompt hook's request was checked against the spend
// limits but held nothing while on its way, so a request of another
// session of this kin (or a subagent beside it) checked meanwhile did not
// count it: two requests that each fit under the day's limit were sent
// together past it, and the person was never asked. A hook's request now
// holds its estimate until its usage is counted, as a turn's does.
func TestAPromptHookOnItsWayHoldsAgainstTheLimits(t *testing.T) {
	// The hook's prompt is about 10,000 tokens (40,000 bytes): the day's
	// 16,000 hold one hook request, not two.
	hook := promptHooks("UserPromptSubmit", "", map[string]any{"prompt": "Judge it. " + strings.Repeat("x", 40_000)})
	svc, m, rec, a, ws := hookService(t, map[string]any{"limits": settings.Limits{DayTokens: 16_000}, "hooks": hook}, permission.Deny)
	hold := make(chan struct{})
	m.Route(isHook,
		modeltest.Reply{Text: []string{`{"ok": true}`}, Usage: modeltest.Usage{Input: 10, Output: 1}, Hold: hold},
		modeltest.Reply{Text: []string{`{"ok": true}`}, Usage: modeltest.Usage{Input: 10, Output: 1}})
	m.Script(modeltest.Reply{Text: []string{"one"}, Usage: modeltest.Usage{Input: 10, Output: 1}},
		modeltest.Reply{Text: []string{"two"}, Usage: modeltest.Usage{Input: 10, Output: 1}})
	first, second := newSession(t, svc, ws), newSession(t, svc, ws)
	if _, err := svc.StartTurn(first, TextInput("first"), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(m.Requests()) == 1 })
	if _, err := svc.StartTurn(second, TextInput("second"), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(m.Requests()) > 1 || len(a.limits()) > 0 })
	n := len(m.Requests())
	close(hold)
	for range 2 {
		waitDone(t, rec.events)
	}
	if n != 1 || len(a.limits()) == 0 {
		t.Errorf("with a hook's request on its way, %d requests were sent and %d limit questions asked: want 1 and the person asked", n, len(a.limits()))
	}
	sp := svc.spend
	sp.mu.Lock()
	day := sp.dayHeld
	sp.mu.Unlock()
	if !day.Zero() {
		t.Errorf("still held against the day: %+v", day)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
