package calltool

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/tasks"
)

// task follows a call the server turned into a task (Tasks extension,
// package mcp/tasks): the task's status and message go to progress as the
// call's output, its questions to the person, and its end becomes the
// call's result. The call itself is never sent again.
func (t *Tool) task(ctx context.Context, env tool.Env, progress func(string), cs *mcp.ClientSession, u *connect.Unhandled) tool.Result {
	server, name := t.b.Name(), t.def.Name
	tk, err := tasks.Parse(u.Result)
	if err != nil {
		return Unknown(server, name, t.b.Redact(err.Error()))
	}
	id := visible.Cut(catalog.Strip(t.b.Redact(tk.TaskID)), 100)
	say := func(s string) {
		if progress != nil {
			progress(s + "\n")
		}
	}
	say(fmt.Sprintf("MCP task %s started on %s", id, catalog.Label(server)))
	// Named in the session log before the first poll, with the launch it
	// runs on, so a kin that stops now polls it again after a restart (on
	// that launch only). An id the server's redaction
	// would change (it holds a secret of the server's) is never written;
	// nor is one too long to be an id, or with characters kin would strip
	// before showing it: a restart then reports the call unknown, as
	// before.
	recorded := t.b.Redact(tk.TaskID) == tk.TaskID && catalog.Strip(tk.TaskID) == tk.TaskID && len(tk.TaskID) <= MaxTaskID &&
		tool.RecordTask(ctx, tool.Task{Server: server, Launch: t.b.Launch(), ID: tk.TaskID})
	if !recorded {
		say("kin could not record this task: if kin stops before it ends, its outcome will be unknown")
	}
	return follow(ctx, env, t.b, name, cs, tk, progress, recorded)
}

// MaxTaskID is the longest task id kin records to follow after a restart.
const MaxTaskID = 256

// MaxStatusMessage is how many characters of a task's status message kin
// passes on (one line).
const MaxStatusMessage = 500

// Resume goes on following task id, which a call of tool name on b's
// server became in a kin that has since stopped (see agent.TaskFollower).
// The call is never sent again. A server that no longer knows the task
// ends the call failed; one that does not answer, unknown.
func Resume(ctx context.Context, env tool.Env, b Binding, name string, id string, progress func(string)) tool.Result {
	server := b.Name()
	cs, ok := b.Session()
	if !ok {
		return Unknown(server, name, fmt.Sprintf("it ran as task %s, and kin, after a restart, could not reach the server to look at it", visible.Cut(catalog.Strip(b.Redact(id)), 100)))
	}
	tk, err := tasks.Get(ctx, cs, id)
	if err != nil {
		label := visible.Cut(catalog.Strip(b.Redact(id)), 100)
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			msg := fmt.Sprintf("The call to tool %s on MCP server %s ran as task %s, which the server no longer knows (kin restarted and asked for it): %s.",
				catalog.Label(name), catalog.Label(server), label, catalog.Strip(b.Redact(werr.Message)))
			out, _ := Frame(server, name, msg)
			return tool.Result{Status: tool.StatusFailed, Output: out, Content: []tool.Content{{Type: "text", Text: msg}}}
		}
		return UnknownSaid(server, name, fmt.Sprintf("it ran as task %s, and kin, after a restart, could not look at it", label), b.Redact(err.Error()))
	}
	if tk.TaskID == "" {
		tk.TaskID = id
	}
	return follow(ctx, env, b, name, cs, tk, progress, true) // on record: the next kin can follow it again
}

// follow polls task tk of a call of tool name to its end. recorded says
// the task is on record (durably) for a kin that restarts: only then is it
// left running when kin stops (tool.Stopping) instead of cancelled, and
// the call left open (tool.Result.Open); a task nothing could follow again
// is cancelled, as a cancelled turn's.
func follow(ctx context.Context, env tool.Env, b Binding, name string, cs *mcp.ClientSession, tk *tasks.Task, progress func(string), recorded bool) tool.Result {
	t := &Tool{b: b, def: catalog.Def{Name: name}}
	server := b.Name()
	id := visible.Cut(catalog.Strip(b.Redact(tk.TaskID)), 100)
	say := func(s string) {
		if progress != nil {
			progress(s + "\n")
		}
	}
	end := tasks.Follow(ctx, cs, tk, tasks.Hooks{
		Status: func(status, msg string) {
			// A status is a word and its message one line: each new one
			// goes to the editor as the call's status (or its output), and
			// a server may change it at every poll.
			line := "task " + visible.Clip(catalog.Strip(status), 40)
			if msg != "" {
				line += ": " + visible.Clip(catalog.Strip(t.b.Redact(msg)), MaxStatusMessage)
			}
			if !tool.Working(ctx, line) {
				say(line) // no "working" status to show it: as output
			}
		},
		Ask: func(ctx context.Context, p *mcp.ElicitParams) *mcp.ElicitResult {
			return t.b.Elicit(ctx, env, p)
		},
		Timeout: t.b.Timeout(),
		Leave:   func(ctx context.Context) bool { return recorded && tool.Stopping(ctx) },
	})
	why := catalog.Strip(t.b.Redact(end.Why))
	switch end.Outcome {
	case tasks.Done:
		return t.outcome(ctx, ctx, end.Result, nil)
	case tasks.Ended:
		msg := fmt.Sprintf("The call to tool %s on MCP server %s ran as task %s and did not complete: %s.",
			catalog.Label(name), catalog.Label(server), id, why)
		out, _ := Frame(server, name, msg)
		return tool.Result{Status: tool.StatusFailed, Output: out, Content: []tool.Content{{Type: "text", Text: msg}}}
	case tasks.Declined:
		msg := fmt.Sprintf("The call to tool %s on MCP server %s ran as task %s and was stopped: %s.",
			catalog.Label(name), catalog.Label(server), id, why)
		return tool.Result{Status: tool.StatusDenied, Output: msg, Content: []tool.Content{{Type: "text", Text: msg}}}
	case tasks.Left:
		// No result is recorded for it (Open): the next kin, on resume,
		// polls the task and ends the call with what it gives. Unknown is
		// what anything that does not know Open records.
		res := Unknown(server, name, fmt.Sprintf("it runs as task %s on the server, which kin left running when it stopped (the next kin follows it when this session is resumed); the call was not sent again", id))
		res.Open = true
		return res
	case tasks.Pending:
		// why may end in the server's error message (tasks/get, tasks/update).
		return UnknownSaid(server, name, fmt.Sprintf("it runs as task %s on the server and its outcome is pending; the call was not sent again", id), why)
	}
	return Unknown(server, name, fmt.Sprintf("it ran as task %s: %s", id, why))
}
