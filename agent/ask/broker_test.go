package ask_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/kin-dev/kin/agent/ask"
)

// recorder is a Notifier that keeps every call, in order.
type recorder struct {
	mu       sync.Mutex
	asked    chan ask.Question
	resolved []string // "<id> <choice> <reason>"
}

func newRecorder() *recorder { return &recorder{asked: make(chan ask.Question, 16)} }

func (r *recorder) Asked(q ask.Question) { r.asked <- q }
func (r *recorder) Resolved(q ask.Question, a ask.Answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolved = append(r.resolved, q.ID+" "+a.Choice+" "+a.Reason)
}

func (r *recorder) resolutions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.resolved...)
}

var deny = ask.Policy{Refusal: "deny"}

// askAsync asks in a goroutine and returns the question as announced and
// a channel with the answer.
func askAsync(b *ask.Broker, r *recorder, ctx context.Context, q ask.Question, pol ask.Policy) (ask.Question, chan ask.Answer) {
	done := make(chan ask.Answer, 1)
	go func() {
		_, a := b.Ask(ctx, q, pol)
		done <- a
	}()
	return <-r.asked, done
}

func TestApprovalsAndElicitationsShareOneBroker(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	ctx := context.Background()
	ap, apDone := askAsync(b, r, ctx, ask.Question{Kind: ask.KindApproval, SessionID: "s1"}, deny)
	el, elDone := askAsync(b, r, ctx, ask.Question{Kind: ask.KindElicitation}, ask.Policy{Refusal: "cancel"})
	launch, launchDone := askAsync(b, r, ctx, ask.Question{Kind: ask.KindApproval}, deny)
	if ap.ID != "ap_1" || el.ID != "el_1" || launch.ID != "ap_2" {
		t.Fatalf("ids %s %s %s", ap.ID, el.ID, launch.ID)
	}
	// Another session sees the questions of no session only; oldest first.
	if got := ids(b.Pending("s2")); got != "el_1 ap_2" {
		t.Errorf("pending of s2: %s", got)
	}
	if got := ids(b.Pending("s1")); got != "ap_1 el_1 ap_2" {
		t.Errorf("pending of s1: %s", got)
	}
	// An answer goes to its own kind only.
	if err := b.Respond(ask.KindElicitation, "ap_1", ask.Answer{Choice: "accept"}); !errors.Is(err, ask.ErrUnknown) {
		t.Errorf("cross-kind answer: %v", err)
	}
	if err := b.Respond(ask.KindApproval, "ap_1", ask.Answer{Choice: "allow_once"}); err != nil {
		t.Fatal(err)
	}
	if a := <-apDone; a.Choice != "allow_once" || a.Reason != ask.ReasonPerson {
		t.Errorf("answer %+v", a)
	}
	if err := b.Respond(ask.KindApproval, "ap_1", ask.Answer{Choice: "deny"}); !errors.Is(err, ask.ErrUnknown) {
		t.Errorf("second answer: %v", err)
	}
	b.Close(ask.ReasonShutdown)
	if a := <-elDone; a.Choice != "cancel" || a.Reason != ask.ReasonShutdown {
		t.Errorf("elicitation after close %+v", a)
	}
	if a := <-launchDone; a.Choice != "deny" || a.Reason != ask.ReasonShutdown {
		t.Errorf("launch after close %+v", a)
	}
	// After Close nothing waits, and nothing is announced.
	if _, a := b.Ask(ctx, ask.Question{Kind: ask.KindApproval}, deny); a.Choice != "deny" || a.Reason != ask.ReasonShutdown {
		t.Errorf("ask after close %+v", a)
	}
	select {
	case q := <-r.asked:
		t.Errorf("asked after close: %+v", q)
	default:
	}
	want := []string{"ap_1 allow_once person", "el_1 cancel shutdown", "ap_2 deny shutdown"}
	if got := r.resolutions(); !sameSet(got, want) {
		t.Errorf("resolutions %v, want %v", got, want)
	}
}

func TestCancelledContextRefusesAndCheckKeepsTheQuestionOpen(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	ctx, cancel := context.WithCancel(context.Background())
	pol := ask.Policy{Refusal: "deny", Check: func(a ask.Answer) (ask.Answer, error) {
		if a.Choice != "allow_once" && a.Choice != "deny" {
			return a, errors.New("not an option")
		}
		return a, nil
	}}
	q, done := askAsync(b, r, ctx, ask.Question{Kind: ask.KindApproval, SessionID: "s1"}, pol)
	if err := b.Respond(ask.KindApproval, q.ID, ask.Answer{Choice: "trust"}); err == nil || errors.Is(err, ask.ErrUnknown) {
		t.Fatalf("a refused answer: %v", err)
	}
	if len(b.Pending("s1")) != 1 {
		t.Fatal("a refused answer closed the question")
	}
	cancel()
	if a := <-done; a.Choice != "deny" || a.Reason != ask.ReasonCancelled {
		t.Errorf("cancelled: %+v", a)
	}
	if len(b.Pending("s1")) != 0 || len(r.resolutions()) != 1 {
		t.Errorf("pending %v resolutions %v", b.Pending("s1"), r.resolutions())
	}
}

// Answers racing a cancellation and a teardown: every question ends in
// exactly one resolution, and an answer that was accepted is the one kept.
func TestEveryQuestionResolvesExactlyOnce(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	const n = 200
	var wg sync.WaitGroup
	accepted := make([]bool, n+1)
	got := make([]ask.Answer, n+1)
	for i := 1; i <= n; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, got[i] = b.Ask(ctx, ask.Question{Kind: ask.KindApproval, SessionID: "s"}, deny)
		}()
		q := <-r.asked
		wg.Add(2)
		go func() { defer wg.Done(); cancel() }()
		go func() {
			defer wg.Done()
			accepted[i] = b.Respond(ask.KindApproval, q.ID, ask.Answer{Choice: "allow_once"}) == nil
		}()
		if i%50 == 0 {
			b.RefuseAll("s", ask.ReasonDisconnected)
		}
	}
	wg.Wait()
	if len(r.resolutions()) != n {
		t.Fatalf("%d resolutions for %d questions", len(r.resolutions()), n)
	}
	for i := 1; i <= n; i++ {
		if accepted[i] != (got[i].Choice == "allow_once") {
			t.Fatalf("question %d: accepted=%v but answered %+v", i, accepted[i], got[i])
		}
	}
}

func ids(qs []ask.Question) string {
	s := ""
	for i, q := range qs {
		if i > 0 {
			s += " "
		}
		s += q.ID
	}
	return s
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// A question whose Body is revised while it waits is asked again under the
// same id with the next revision; an answer to an older revision is
// refused and leaves it open; the answer says which revision it was given
// to, and Pending shows the latest.
func TestARevisedQuestionRefusesAnswersToTheOldOne(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	revise := make(chan any)
	q, done := askAsync(b, r, context.Background(), ask.Question{Kind: ask.KindApproval, SessionID: "s1", Body: "diff 1"},
		ask.Policy{Refusal: "deny", Revise: revise})
	if q.Revision != 0 || q.Body != "diff 1" {
		t.Fatalf("first %+v", q)
	}
	revise <- "diff 2"
	q2 := <-r.asked
	if q2.ID != q.ID || q2.Revision != 1 || q2.Body != "diff 2" {
		t.Fatalf("revised %+v", q2)
	}
	if p := b.Pending("s1"); len(p) != 1 || p[0].Body != "diff 2" || p[0].Revision != 1 {
		t.Errorf("pending %+v", p)
	}
	err := b.Respond(ask.KindApproval, q.ID, ask.Answer{Choice: "allow_once"})
	if !errors.Is(err, ask.ErrOutdated) {
		t.Fatalf("an answer to revision 0: %v", err)
	}
	if err := b.Respond(ask.KindApproval, q.ID, ask.Answer{Choice: "allow_once", Revision: 1}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Choice != "allow_once" || a.Revision != 1 || a.Reason != ask.ReasonPerson {
		t.Errorf("answer %+v", a)
	}
	if got := r.resolutions(); len(got) != 1 || got[0] != q.ID+" allow_once person" {
		t.Errorf("resolved %v", got)
	}
	// A revision that comes after the answer is not asked.
	close(revise)
	select {
	case extra := <-r.asked:
		t.Errorf("asked after the answer: %+v", extra)
	default:
	}
}

// A refusal on the person's behalf carries the revision that was shown.
func TestARefusedRevisedQuestionSaysWhichRevision(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	ctx, cancel := context.WithCancel(context.Background())
	revise := make(chan any)
	_, done := askAsync(b, r, ctx, ask.Question{Kind: ask.KindApproval, Body: "v0"}, ask.Policy{Refusal: "deny", Revise: revise})
	revise <- "v1"
	<-r.asked
	cancel()
	if a := <-done; a.Choice != "deny" || a.Revision != 1 || a.Reason != ask.ReasonCancelled {
		t.Errorf("refusal %+v", a)
	}
}
