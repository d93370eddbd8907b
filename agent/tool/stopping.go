package tool

import (
	"context"
	"errors"
)

// A turn ends in two ways that a call whose work goes on elsewhere (an MCP
// server's task) must tell apart. The person cancelling it (turn/cancel,
// Ctrl-C, ACP session/cancel) stops that work too. kin itself stopping (the
// editor closed the connection, shutdown/exit, a signal, kin chat exiting)
// must not: the person's job goes on on the server, and the next kin
// follows it when the session is resumed (its task is on record). The turn
// loop cancels a turn for the second with ErrStopping as the cause.

// ErrStopping is the cause of a turn's context when kin stops, not the
// person.
var ErrStopping = errors.New("kin is stopping")

type stoppingKey struct{}

// WithStopping returns ctx on which Stopping also consults f, which says
// kin has begun to stop: the questions it had put to the person are
// withdrawn a moment before its turns are cancelled, and such a
// withdrawal is not the person declining.
func WithStopping(ctx context.Context, f func() bool) context.Context {
	return context.WithValue(ctx, stoppingKey{}, f)
}

// Stopping reports whether kin stops: ctx ended with ErrStopping, or, ctx
// still live, kin has begun to stop (WithStopping). A ctx that ended
// otherwise (the person cancelled the turn, a save failed) ended so even
// when kin begins to stop before its calls look: the person's cancel still
// cancels the call's task.
func Stopping(ctx context.Context) bool {
	if ctx.Err() != nil {
		return errors.Is(context.Cause(ctx), ErrStopping)
	}
	f, ok := ctx.Value(stoppingKey{}).(func() bool)
	return ok && f != nil && f()
}
