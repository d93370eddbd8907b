package tool

import (
	"context"
	"errors"
	"testing"
)

// Stopping tells kin's end from the person's. A turn the person cancelled
// (or one that ended on a failed save) ended so even if kin begins to stop
// before its calls look: the person's cancel must still send tasks/cancel
// (tasks.Hooks.Leave consults Stopping). Only a live context, whose
// question kin withdrew as it began to stop, asks kin's flag.
func TestStoppingTellsKinsEndFromThePersons(t *testing.T) {
	stopping := func() bool { return true }
	notYet := func() bool { return false }
	cases := []struct {
		name  string
		cause error // nil: live; context.Canceled: the person's cancel
		flag  func() bool
		want  bool
	}{
		{"live, kin runs on", nil, notYet, false},
		{"live, kin began to stop", nil, stopping, true},
		{"kin stopped the turn", ErrStopping, notYet, true},
		{"the person cancelled, kin runs on", context.Canceled, notYet, false},
		{"the person cancelled, then kin began to stop", context.Canceled, stopping, false},
		{"a save failed, then kin began to stop", errors.New("disk full"), stopping, false},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancelCause(WithStopping(context.Background(), c.flag))
		if c.cause != nil {
			cancel(c.cause)
		}
		if got := Stopping(ctx); got != c.want {
			t.Errorf("%s: Stopping %v, want %v", c.name, got, c.want)
		}
		cancel(nil)
	}
}
