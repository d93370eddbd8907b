package agent

import (
	"math"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/spend"
)

// A broken (or hostile) service that reports a negative usage must not
// give tokens back: the session's limit still holds for what the next
// turns really use (the report is not believed: kin estimates). Before the
// fix the first answer's -1,000,000 input tokens were added to the
// session's total, and the turn that passes the limit of 5,000 with what
// the second used (4,100) was never asked about.
func TestANegativeUsageGivesNoTokensBack(t *testing.T) {
	svc, m, rec, a, ws := limitService(t, t.TempDir(), settings.Limits{SessionTokens: 5000}, permission.Deny)
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Text: []string{"one"}, Usage: modeltest.Usage{Input: -1_000_000, Output: 5}},
		modeltest.Reply{Text: []string{"two"}, Usage: modeltest.Usage{Input: 4000, Output: 100}},
		modeltest.Reply{Text: []string{"three"}},
	)
	for i := range 2 {
		if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnCompleted || d.Usage.InputTokens < 0 {
			t.Fatalf("turn %d: %+v", i, d)
		}
	}
	got, err := svc.UsageSummary(sid, spend.ScopeSession)
	if err != nil || got.Tally.InputTokens <= 4000 || !got.Tally.Estimated {
		t.Fatalf("the session's total %+v %v: a negative report was subtracted", got.Tally, err)
	}
	if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnLimit || len(a.limits()) != 1 {
		t.Fatalf("third turn %+v, asked %d times: the limit did not hold", d, len(a.limits()))
	}
	if n := len(m.Requests()); n != 2 {
		t.Errorf("%d requests sent, want 2", n)
	}
}

// Counts so large that adding them wraps around int64 must not turn into
// a negative total that passes every limit.
func TestAnAbsurdUsageDoesNotWrapAround(t *testing.T) {
	svc, m, rec, a, ws := limitService(t, t.TempDir(), settings.Limits{SessionTokens: 3000}, permission.Deny)
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Text: []string{"one"}, Usage: modeltest.Usage{Input: math.MaxInt64, Output: math.MaxInt64}},
		modeltest.Reply{Text: []string{"never sent"}},
	)
	if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnCompleted || d.Usage.InputTokens < 0 || d.Usage.OutputTokens < 0 {
		t.Fatalf("%+v", d)
	}
	got, _ := svc.UsageSummary(sid, spend.ScopeSession)
	if got.Tally.Tokens() < 3000 {
		t.Fatalf("the session's total %+v wrapped around", got.Tally)
	}
	if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnLimit || len(a.limits()) != 1 {
		t.Fatalf("second turn %+v, asked %d times", d, len(a.limits()))
	}
}
