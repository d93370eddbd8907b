package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
)

// The attack: two editor windows, two kins on one KIN_HOME, one day's
// limit. A request on its way held its estimate only in its own kin: the
// other kin, checking its next request meanwhile, saw neither that request
// (its usage is not in the day's ledger yet) nor its hold, and both went
// out together past the limit without the person being asked. Holds are
// now recorded in the day's ledger, and count in every kin.
func TestTwoKinsDoNotPassADayLimitTogether(t *testing.T) {
	home := t.TempDir()
	l := settings.Limits{DayTokens: 16_000}
	// each question is about 10,000 tokens: the day holds one, not two
	a, ma, reca, _, wsa := limitService(t, home, l)
	b, mb, recb, askb, wsb := limitService(t, home, l, permission.Deny)
	hold := make(chan struct{})
	ma.Script(modeltest.Reply{Text: []string{"one"}, Usage: modeltest.Usage{Input: 10_000, Output: 1}, Hold: hold})
	mb.Script(modeltest.Reply{Text: []string{"two"}, Usage: modeltest.Usage{Input: 10_000, Output: 1}})
	sa, sb := newSession(t, a, wsa), newSession(t, b, wsb)
	if _, err := a.StartTurn(sa, TextInput("a "+strings.Repeat("x", 40_000)), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(ma.Requests()) == 1 })
	if _, err := b.StartTurn(sb, TextInput("b "+strings.Repeat("x", 40_000)), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(mb.Requests()) > 0 || len(askb.limits()) > 0 })
	sent := len(mb.Requests())
	close(hold)
	waitDone(t, reca.events)
	waitDone(t, recb.events)
	if sent != 0 || len(askb.limits()) == 0 {
		t.Errorf("with the other kin's request on its way, this kin sent %d and asked %d times: want 0 and the person asked", sent, len(askb.limits()))
	}
}

// A kin that cannot record its holds (here KIN_HOME/run cannot be made)
// still checks against the ledger it reads and sends, as before holds
// were recorded: the requests are not all refused.
func TestAHoldThatCannotBeRecordedDoesNotStopRequests(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "run"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	svc, m, rec, _, ws := limitService(t, home, settings.Limits{DayTokens: 1_000_000})
	m.Script(modeltest.Reply{Text: []string{"fine"}, Usage: modeltest.Usage{Input: 10, Output: 1}})
	sid := newSession(t, svc, ws)
	if d := ask(t, svc, rec, sid, TextInput("go")); d.Status != TurnCompleted || len(m.Requests()) != 1 {
		t.Errorf("turn %s (%s), %d requests", d.Status, d.Error, len(m.Requests()))
	}
}
