package ask_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/ask"
)

// A limit set with WithTimeout does not run while the person is asked: the
// question waits several times the limit, and the context is still live
// when the answer comes; the limit runs again afterwards and ends it.
func TestTheClockStopsWhileThePersonIsAsked(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	ctx, cancel := ask.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// the test holds the clock until the question is asked: on a loaded
	// machine the asking goroutine may start after the whole limit, and
	// then the limit ran out before anything was asked
	setUp := ask.Hold(ctx)
	q, done := askAsync(b, r, ctx, ask.Question{Kind: ask.KindElicitation}, ask.Policy{Refusal: "cancel"})
	setUp() // from here only the question holds it

	time.Sleep(500 * time.Millisecond) // the person takes their time: five times the limit
	if err := ctx.Err(); err != nil {
		t.Fatalf("the limit ran out while the person was asked: %v", err)
	}
	if err := b.Respond(ask.KindElicitation, q.ID, ask.Answer{Choice: "accept"}); err != nil {
		t.Fatal(err)
	}
	if a := <-done; a.Choice != "accept" || a.Reason != ask.ReasonPerson {
		t.Fatalf("answer %+v", a)
	}
	<-ctx.Done() // the rest of the limit runs after the answer
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Errorf("ended by %v, want the deadline", context.Cause(ctx))
	}
}

// Hold stops every limit a context was set inside, nested holds need every
// resume, and a context without a limit is held without effect.
func TestHoldStopsEveryEnclosingClock(t *testing.T) {
	outer, cancelOuter := ask.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelOuter()
	inner, cancelInner := ask.WithTimeout(outer, 100*time.Millisecond)
	defer cancelInner()
	r1 := ask.Hold(inner)
	r2 := ask.Hold(inner)
	time.Sleep(400 * time.Millisecond)
	r1()
	r1() // a second resume is nothing
	time.Sleep(400 * time.Millisecond)
	if outer.Err() != nil || inner.Err() != nil {
		t.Fatalf("a held clock ran: outer %v inner %v", outer.Err(), inner.Err())
	}
	r2()
	<-inner.Done()
	<-outer.Done()
	ask.Hold(context.Background())() // no clock: nothing to hold
}

// A question whose context ends with an *Ended cause is resolved with its
// reason (the call it was asked for ended, the server went away), not as
// cancelled.
func TestAQuestionWhoseCallEndedSaysSo(t *testing.T) {
	r := newRecorder()
	b := ask.New(r)
	ctx, cancel := context.WithCancelCause(context.Background())
	_, done := askAsync(b, r, ctx, ask.Question{Kind: ask.KindElicitation}, ask.Policy{Refusal: "cancel"})
	cancel(&ask.Ended{Reason: ask.ReasonCallEnded})
	if a := <-done; a.Choice != "cancel" || a.Reason != ask.ReasonCallEnded {
		t.Errorf("answer %+v", a)
	}
}
