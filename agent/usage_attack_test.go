package agent

import (
	"math"
	"strings"
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

// Attack: a service that accepts each request and streams an answer but
// never completes it (no response.completed) reports no usage; the
// person asks again, and again. Each request ran and is billed, so each
// counts, at kin's estimate: before, none did, and a day's limit never
// came near however many were sent.
func TestAnAnswerThatNeverCompletesStillCounts(t *testing.T) {
	svc, m, rec, a, ws := limitService(t, t.TempDir(), settings.Limits{DayTokens: 5000}, permission.Deny)
	sid := newSession(t, svc, ws)
	long := strings.Repeat("word ", 1000) // about 1,250 tokens of output
	m.Script(
		modeltest.Reply{Text: []string{long}, NoCompleted: true},
		modeltest.Reply{Text: []string{long}, DropAfter: 3},
		modeltest.Reply{Text: []string{"never sent"}},
	)
	for i := range 2 {
		if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnFailed {
			t.Fatalf("turn %d: %+v", i, d)
		}
	}
	day, err := svc.UsageSummary("", spend.ScopeDay)
	if err != nil || day.Tally.OutputTokens < 1250 || !day.Tally.Estimated {
		t.Fatalf("the day %+v %v: the answers that never completed were not counted", day.Tally, err)
	}
	if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnLimit || len(a.limits()) != 1 {
		t.Fatalf("third turn %+v, asked %d times", d, len(a.limits()))
	}
}

// A request the service refused (HTTP 400: nothing ran) counts nothing.
func TestARefusedRequestCountsNothing(t *testing.T) {
	svc, m, rec, _, ws := limitService(t, t.TempDir(), settings.Limits{DayTokens: 1_000_000})
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{HTTPStatus: 400, ErrorMessage: "bad request"})
	if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnFailed {
		t.Fatalf("%+v", d)
	}
	if day, _ := svc.UsageSummary("", spend.ScopeDay); !day.Tally.Zero() {
		t.Errorf("a refused request counted %+v", day.Tally)
	}
}
