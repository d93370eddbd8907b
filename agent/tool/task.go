package tool

import "context"

// A call that an MCP server turned into a task (issue 24 §2) names the
// task before kin polls it, so that a kin that stops while the task runs
// can find it again after a restart and go on polling instead of calling
// the outcome unknown. The turn loop puts the recorder on the call's
// context (WithTaskRecorder); the tool calls RecordTask.

// Task names the MCP task a call runs as.
type Task struct {
	// Server is the server's configured name.
	Server string
	// Launch is the launch the call ran on (mcp/trust's Launch.Key: the
	// server's name, scope, project, what it runs and where): a restart
	// follows the task only on that launch, never on whatever the name
	// launches by then.
	Launch string
	// ID is the task's id on that server.
	ID string
}

type taskKey struct{}

// WithTaskRecorder returns ctx on which RecordTask reports to f, which
// makes the record durable (or says why it could not).
func WithTaskRecorder(ctx context.Context, f func(Task) error) context.Context {
	return context.WithValue(ctx, taskKey{}, f)
}

// RecordTask records that the call runs as task t. It returns whether the
// record is durable: false on a context without a recorder or when the
// write failed (a restart then reports the call unknown, as before).
func RecordTask(ctx context.Context, t Task) bool {
	f, ok := ctx.Value(taskKey{}).(func(Task) error)
	return ok && f != nil && f(t) == nil
}
