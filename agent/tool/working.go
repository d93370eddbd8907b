package tool

import "context"

// A call whose work goes on elsewhere (an MCP server's task, issue 24 §2)
// says so while it runs: the turn shows it with status "working" and the
// message, which may change. The turn loop puts the reporter on the call's
// context (WithWorking); a tool calls Working.

type workingKey struct{}

// WithWorking returns ctx on which Working reports to f.
func WithWorking(ctx context.Context, f func(message string)) context.Context {
	return context.WithValue(ctx, workingKey{}, f)
}

// Working reports that the call's work goes on elsewhere, with a message
// for the person (the server's own text, already stripped and redacted by
// the caller), and whether anyone was told: nothing happens on a context
// without a reporter (the caller may then say it another way).
func Working(ctx context.Context, message string) bool {
	if f, ok := ctx.Value(workingKey{}).(func(string)); ok && f != nil {
		f(message)
		return true
	}
	return false
}
