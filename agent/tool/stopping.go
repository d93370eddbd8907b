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

// Stopping reports whether ctx ended because kin stops.
func Stopping(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrStopping)
}
