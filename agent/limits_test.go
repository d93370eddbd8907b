package agent

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	askpkg "github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/spend"
	"github.com/kin-dev/kin/agent/tool"
)

// answerer plays the person: it answers each approval with the next of
// its decisions (deny when it has none left) and keeps what it was asked.
type answerer struct {
	gate *permission.Gate

	mu        sync.Mutex
	decisions []string
	asked     []permission.Request
}

func (a *answerer) Asked(q askpkg.Question) {
	r, ok := q.Body.(permission.Request)
	if !ok {
		return
	}
	a.mu.Lock()
	a.asked = append(a.asked, r)
	d := permission.Deny
	if len(a.decisions) > 0 {
		d, a.decisions = a.decisions[0], a.decisions[1:]
	}
	a.mu.Unlock()
	go a.gate.Respond(q.ID, d)
}

func (a *answerer) Resolved(askpkg.Question, askpkg.Answer) {}

func (a *answerer) limits() []permission.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []permission.Request
	for _, r := range a.asked {
		if r.Kind == permission.KindLimit {
			out = append(out, r)
		}
	}
	return out
}

func mustGrants(t *testing.T) *permission.Grants {
	g, err := permission.LoadGrants(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func writeLimits(t *testing.T, home string, l settings.Limits) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"limits": l})
	if err := os.WriteFile(filepath.Join(home, "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// limitService is a service under limits whose person answers with
// decisions; home may be shared by two services (two kins).
func limitService(t *testing.T, home string, l settings.Limits, decisions ...string) (*Service, *modeltest.Server, *screen, *answerer, string) {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	writeLimits(t, home, l)
	a := &answerer{decisions: decisions}
	a.gate = permission.NewGate(askpkg.New(a), mustGrants(t))
	rec := &screen{events: events{done: make(chan TurnDone, 8)}}
	svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
		Tools: tool.Static(builtin.Tools(builtin.Options{})), Events: rec, Gate: a.gate})
	t.Cleanup(svc.Shutdown)
	return svc, m, rec, a, workspace(t)
}

func newSession(t *testing.T, svc *Service, ws string) string {
	t.Helper()
	s, err := svc.NewSession(SessionOptions{Roots: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	return s.Info.SessionID
}

// A turn that has used 1,600 of its 2,000 tokens is asked before the
// request that would pass the limit (its input alone is about as much),
// with the three choices; "continue" lets it end as it would have.
func TestATurnLimitAsksBeforeTheRequestThatWouldPassIt(t *testing.T) {
	svc, m, rec, a, ws := limitService(t, t.TempDir(), settings.Limits{TurnTokens: 2000}, permission.AllowOnce)
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n")
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}, Usage: modeltest.Usage{Input: 1500, Output: 100}},
		modeltest.Reply{Text: []string{"done"}, Usage: modeltest.Usage{Input: 1700, Output: 5}},
	)
	d := ask(t, svc, rec, sid, TextInput("hi"))
	if d.Status != TurnCompleted || d.Usage.InputTokens != 3200 || d.Usage.OutputTokens != 105 {
		t.Fatalf("%+v", d)
	}
	asked := a.limits()
	if len(asked) != 1 {
		t.Fatalf("asked %d limit questions, want 1", len(asked))
	}
	r := asked[0]
	if r.SessionID != sid || r.TurnID != d.TurnID || !strings.HasPrefix(r.Title, "This turn has used 1,600 tokens of its limit of 2,000 tokens (limits.turnTokens); the next model request adds about 1,") {
		t.Errorf("request %+v", r)
	}
	var opts []string
	for _, o := range r.Options {
		opts = append(opts, o.OptionID+"="+o.Name)
	}
	if got := strings.Join(opts, "; "); !strings.HasPrefix(got, "allow_once=Continue this turn; allow_always=Raise the limit to ") || !strings.HasSuffix(got, "for this session; deny=Stop") {
		t.Errorf("options %s", got)
	}
	// The decision is on record.
	res, _ := svc.Resume(sid, ResumeOptions{})
	found := false
	for _, h := range res.History {
		if h.Type == "decision" && h.ApprovalKind == permission.KindLimit && h.Decision == permission.AllowOnce {
			found = true
		}
	}
	if !found {
		t.Errorf("no limit decision in the history")
	}
}

// "Stop" ends the turn with status limit and a message naming the limit;
// the request is never sent.
func TestStopAtALimitSendsNothingMore(t *testing.T) {
	svc, m, rec, _, ws := limitService(t, t.TempDir(), settings.Limits{TurnTokens: 2000}, permission.Deny)
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n")
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}, Usage: modeltest.Usage{Input: 1500, Output: 100}},
		modeltest.Reply{Text: []string{"never sent"}},
	)
	d := ask(t, svc, rec, sid, TextInput("hi"))
	if d.Status != TurnLimit || !strings.Contains(d.Error, "limits.turnTokens") || !strings.Contains(d.Error, "1,600 tokens of its limit of 2,000") {
		t.Fatalf("%+v", d)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("%d requests sent, want 1", n)
	}
}

// Without anyone to ask (no gate), a limit stops the turn, saying so.
func TestNobodyToAskStops(t *testing.T) {
	home := t.TempDir()
	writeLimits(t, home, settings.Limits{SessionTokens: 1})
	svc, m, ev := testService(t)
	svc2 := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"}, Events: ev})
	t.Cleanup(svc2.Shutdown)
	_ = svc
	s, _ := svc2.NewSession(SessionOptions{Roots: []string{workspace(t)}})
	if _, err := svc2.StartTurn(s.Info.SessionID, TextInput("hi"), nil); err != nil {
		t.Fatal(err)
	}
	d := waitDone(t, ev)
	if d.Status != TurnLimit || !strings.Contains(d.Error, "nobody could be asked") || len(m.Requests()) != 0 {
		t.Fatalf("%+v, %d requests", d, len(m.Requests()))
	}
}

// "Raise" raises the session's limit by as much again: the next turn is
// not asked until it passes the raised limit. The session's usage is
// summed from its log by another kin.
func TestRaiseHoldsForTheSessionAndTheTotalSurvivesAnotherKin(t *testing.T) {
	home := t.TempDir()
	svc, m, rec, a, ws := limitService(t, home, settings.Limits{SessionTokens: 3000}, permission.AllowAlways)
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{Text: []string{"one"}, Usage: modeltest.Usage{Input: 2500, Output: 100}},
		modeltest.Reply{Text: []string{"two"}, Usage: modeltest.Usage{Input: 100, Output: 5}},
		modeltest.Reply{Text: []string{"three"}, Usage: modeltest.Usage{Input: 10, Output: 5}})
	for i := range 3 {
		if d := ask(t, svc, rec, sid, TextInput("q")); d.Status != TurnCompleted {
			t.Fatalf("turn %d: %+v", i, d)
		}
	}
	if n := len(a.limits()); n != 1 {
		t.Errorf("asked %d times; after a raise to about 8,000 the third turn is within it", n)
	}
	got, err := svc.UsageSummary(sid, spend.ScopeSession)
	if err != nil || got.Tally.Tokens() != 2720 {
		t.Fatalf("summary %+v %v", got, err)
	}
	if len(got.Limits) != 1 || got.Limits[0].Max <= 3000 {
		t.Errorf("the raised limit: %+v", got.Limits)
	}
	svc.Shutdown()
	// Another kin on the same home: the session's total is read from its
	// log (the raise was for that kin's session only).
	other, _, _, _, _ := limitService(t, home, settings.Limits{SessionTokens: 3000})
	got, err = other.UsageSummary(sid, spend.ScopeSession)
	if err != nil || got.Tally.Tokens() != 2720 || got.Limits[0].Max != 3000 {
		t.Errorf("from another kin: %+v %v", got, err)
	}
}

// A subagent's usage counts once towards the day, into its own session,
// its parent's session and its parent's turn.
func TestASubagentsUsageCountsOnce(t *testing.T) {
	svc, m, rec, _, ws := limitService(t, t.TempDir(), settings.Limits{DayTokens: 1_000_000,
		Prices: map[string]settings.Price{"mock": {Input: 1, Output: 10}}})
	sid := newSession(t, svc, ws)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "d1", Name: DelegateToolName, Arguments: `{"task":"look around"}`}}, Usage: modeltest.Usage{Input: 100, Output: 10}},
		modeltest.Reply{Text: []string{"found it"}, Usage: modeltest.Usage{Input: 50, Output: 5}},
		modeltest.Reply{Text: []string{"done"}, Usage: modeltest.Usage{Input: 200, Output: 20}},
	)
	if _, err := svc.StartTurn(sid, TextInput("go"), nil); err != nil {
		t.Fatal(err)
	}
	var d TurnDone
	for d.SessionID != sid {
		d = waitDone(t, rec.events)
	}
	if d.Status != TurnCompleted || d.Usage.InputTokens != 350 || d.Usage.OutputTokens != 35 {
		t.Fatalf("%+v", d)
	}
	if want := (350*1 + 35*10) / 1e6; math.Abs(d.Usage.Cost-want) > 1e-12 || d.Usage.Currency != "USD" || d.Usage.SessionTokens != 385 {
		t.Errorf("cost %v currency %q session %d", d.Usage.Cost, d.Usage.Currency, d.Usage.SessionTokens)
	}
	day, err := svc.UsageSummary("", spend.ScopeDay)
	if err != nil || day.Tally.Tokens() != 385 {
		t.Errorf("the day: %+v %v", day.Tally, err)
	}
	sess, _ := svc.UsageSummary(sid, spend.ScopeSession)
	if sess.Tally.Tokens() != 385 {
		t.Errorf("the parent's session: %+v", sess.Tally)
	}
}

// A service that reports no usage is counted from kin's estimate, said
// once.
func TestNoReportedUsageIsEstimatedAndSaid(t *testing.T) {
	svc, m, rec, _, ws := limitService(t, t.TempDir(), settings.Limits{DayTokens: 1_000_000})
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{Text: []string{strings.Repeat("x", 400)}, Usage: modeltest.Usage{None: true}})
	d := ask(t, svc, rec, sid, TextInput("hi"))
	if d.Status != TurnCompleted || !d.Usage.Estimated || d.Usage.OutputTokens != 100 || d.Usage.InputTokens == 0 {
		t.Fatalf("%+v", d)
	}
	said := 0
	for _, n := range rec.notices {
		if n.Source == "limits" && strings.Contains(n.Message, "estimate") {
			said++
		}
	}
	if said != 1 {
		t.Errorf("said %d times", said)
	}
}

// The day's limit counts what every kin on the computer used: a second
// kin on the same home is asked once the first used the day's tokens.
func TestTheDaysLimitCountsEveryKin(t *testing.T) {
	home := t.TempDir()
	l := settings.Limits{DayTokens: 2000}
	first, m1, rec1, a1, ws := limitService(t, home, l)
	m1.Script(modeltest.Reply{Text: []string{"a"}, Usage: modeltest.Usage{Input: 1500, Output: 500}})
	if d := ask(t, first, rec1, newSession(t, first, ws), TextInput("q")); d.Status != TurnCompleted || len(a1.limits()) != 0 {
		t.Fatalf("%+v", d)
	}
	second, m2, rec2, a2, ws2 := limitService(t, home, l)
	m2.Script(modeltest.Reply{Text: []string{"never"}})
	d := ask(t, second, rec2, newSession(t, second, ws2), TextInput("q"))
	if d.Status != TurnLimit || len(a2.limits()) != 1 || !strings.Contains(a2.limits()[0].Title, "Today, kin has used 2,000 tokens") || len(m2.Requests()) != 0 {
		t.Fatalf("%+v asked %+v", d, a2.limits())
	}
}

// A compaction's summary is a model request: the limit is asked about
// before it, and a stop stops the turn without any request.
func TestACompactionSummaryIsCheckedToo(t *testing.T) {
	home := t.TempDir()
	svc, m, rec, a, ws := limitService(t, home, settings.Limits{TurnTokens: 1000}, permission.Deny)
	svc.models = model.One(model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock", ContextWindow: 2000})
	sid := newSession(t, svc, ws)
	m.Script(modeltest.Reply{Text: []string{strings.Repeat("long answer ", 300)}, Usage: modeltest.Usage{Input: 800, Output: 150}})
	if d := ask(t, svc, rec, sid, TextInput("first question")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	// The second turn starts past the window's threshold: the summary's
	// request is the one asked about (a new turn has used nothing, so the
	// summary's own input passes the turn's 1,000 tokens).
	m.Script(modeltest.Reply{Text: []string{"summary"}}, modeltest.Reply{Text: []string{"short"}})
	d := ask(t, svc, rec, sid, TextInput(strings.Repeat("second question ", 300)))
	if d.Status != TurnLimit || len(m.Requests()) != 1 || len(a.limits()) != 1 {
		t.Fatalf("%+v, %d requests, asked %d", d, len(m.Requests()), len(a.limits()))
	}
}

// Bad limits stop every request, naming what is wrong.
func TestBadLimitsStopEveryRequest(t *testing.T) {
	svc, m, rec, _, ws := limitService(t, t.TempDir(), settings.Limits{DayCost: 5})
	d := ask(t, svc, rec, newSession(t, svc, ws), TextInput("q"))
	if d.Status != TurnLimit || !strings.Contains(d.Error, "needs prices") || len(m.Requests()) != 0 {
		t.Fatalf("%+v", d)
	}
}
