// Package tasks is the client half of the MCP Tasks extension
// (io.modelcontextprotocol/tasks, 2026-07-28), written on top of go-sdk,
// which has no support for it, in this one place.
//
// kin declares the extension; a server may then answer a tools/call with a
// task (resultType "task") instead of the result. The reply is caught
// before the SDK would decode it into an empty success (mcp/connect's
// reply.go) and handed here: Follow polls tasks/get, no more often than
// the task's pollIntervalMs asks (within MinPoll..MaxPoll), reports each
// new status and statusMessage, answers input_required through the same
// question path as any server question (tasks/update with the answers),
// sends tasks/cancel when the turn is cancelled (not when kin itself stops:
// see Hooks.Leave), and ends with the task's result, or failed (a failed, cancelled or expired task, with its
// reason), or pending (the connection went away: the task id is kept and
// the call is never sent again).
//
// This package must never re-send the call that created a task, and
// never answer a question the person did not answer.
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// Polling bounds: a server's pollIntervalMs is honoured within them (a
// server cannot make kin poll in a busy loop, nor wait an hour between
// looks).
const (
	MinPoll     = 250 * time.Millisecond
	DefaultPoll = time.Second
	MaxPoll     = 30 * time.Second
	// MaxInputRounds bounds the questions one task may ask.
	MaxInputRounds = 10
)

// Statuses of a task.
const (
	Working       = "working"
	InputRequired = "input_required"
	Completed     = "completed"
	Failed        = "failed"
	Cancelled     = "cancelled"
)

// Task is a task's state as the server reports it (CreateTaskResult and
// tasks/get's DetailedTask).
type Task struct {
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt,omitempty"`
	LastUpdatedAt  string              `json:"lastUpdatedAt,omitempty"`
	TTLMs          *int64              `json:"ttlMs,omitempty"`
	PollIntervalMs *int64              `json:"pollIntervalMs,omitempty"`
	InputRequests  mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Parse reads a CreateTaskResult (the raw result of a call answered with
// resultType "task").
func Parse(raw json.RawMessage) (*Task, error) {
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("the task the server created cannot be read: %v", err)
	}
	if t.TaskID == "" {
		return nil, errors.New("the server answered with a task that has no taskId")
	}
	return &t, nil
}

// Declare adds the extension to the capabilities kin sends (per request on
// 2026-07-28, at initialize before).
func Declare(caps *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	caps.AddExtension(Extension, map[string]any{})
	return caps
}

type getParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type getResult struct {
	mcp.ResultBase
	Task
}

type updateParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses"`
}

type cancelParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type emptyResult struct{ mcp.ResultBase }

// Register lets a client send tasks/get, tasks/update and tasks/cancel.
func Register(c *mcp.Client) error {
	if err := mcp.AddSendingCustomMethod[*getParams, *getResult](c, "tasks/get"); err != nil {
		return err
	}
	if err := mcp.AddSendingCustomMethod[*updateParams, *emptyResult](c, "tasks/update"); err != nil {
		return err
	}
	return mcp.AddSendingCustomMethod[*cancelParams, *emptyResult](c, "tasks/cancel")
}

// Hooks is what Follow needs of its caller.
type Hooks struct {
	// Status is told each new status and message (the first included).
	Status func(status, message string)
	// Ask puts one question of an input_required task to the person; nil
	// or anything but "accept" stops answering (the task is cancelled).
	Ask func(ctx context.Context, p *mcp.ElicitParams) *mcp.ElicitResult
	// Timeout bounds each tasks/* request (0: 30 s).
	Timeout time.Duration
	// Leave says, once ctx ended or a question went unanswered, that kin
	// stops (rather than the person cancelling the turn or declining),
	// and that the task is on record for the next kin to follow: the task
	// is then left running (no tasks/cancel) and Follow ends Left. Nil:
	// never.
	Leave func(ctx context.Context) bool
}

// Outcome is how following a task ended.
type Outcome int

const (
	// Done: the task completed; Result is its CallToolResult.
	Done Outcome = iota
	// Ended: the task failed, was cancelled or expired; Why says how.
	Ended
	// Declined: the person declined or cancelled a question of the task
	// (it was cancelled), or kin cannot answer what it asked.
	Declined
	// Pending: the connection went away or the server stopped answering;
	// the task may still run. Its id is kept; the call is never re-sent.
	Pending
	// Stopped: the turn was cancelled; tasks/cancel was sent.
	Stopped
	// Left: kin stops (Hooks.Leave); the task was left running, nothing
	// was sent to the server.
	Left
)

// End is the end of Follow.
type End struct {
	Outcome Outcome
	Result  *mcp.CallToolResult
	Why     string
	Task    Task // the last state seen
}

// Follow polls task t on cs until it ends, ctx is cancelled or the
// connection goes away.
func Follow(ctx context.Context, cs *mcp.ClientSession, t *Task, h Hooks) End {
	if h.Timeout <= 0 {
		h.Timeout = 30 * time.Second
	}
	cur := *t
	lastStatus, lastMsg := "", ""
	answered := map[string]bool{}
	rounds := 0
	for {
		if cur.Status != lastStatus || cur.StatusMessage != lastMsg {
			lastStatus, lastMsg = cur.Status, cur.StatusMessage
			if h.Status != nil {
				h.Status(cur.Status, cur.StatusMessage)
			}
		}
		switch cur.Status {
		case Completed:
			var res mcp.CallToolResult
			if len(cur.Result) == 0 || json.Unmarshal(cur.Result, &res) != nil {
				return End{Outcome: Ended, Task: cur, Why: "the task completed without a result kin can read"}
			}
			return End{Outcome: Done, Result: &res, Task: cur}
		case Failed:
			why := "the task failed"
			if cur.Error != nil {
				why = fmt.Sprintf("the task failed (code %d): %s", cur.Error.Code, cur.Error.Message)
			} else if cur.StatusMessage != "" {
				why = "the task failed: " + cur.StatusMessage
			}
			return End{Outcome: Ended, Task: cur, Why: why}
		case Cancelled:
			why := "the server cancelled the task"
			if cur.StatusMessage != "" {
				why += ": " + cur.StatusMessage
			}
			return End{Outcome: Ended, Task: cur, Why: why}
		case InputRequired:
			if e, stop := answer(ctx, cs, &cur, h, answered, &rounds); stop {
				return e
			}
		case Working:
		default:
			return End{Outcome: Ended, Task: cur, Why: fmt.Sprintf("the task has status %.40q, which kin does not know", cur.Status)}
		}
		if expired(cur) {
			cancel(cs, cur.TaskID, h.Timeout)
			return End{Outcome: Ended, Task: cur, Why: "the task expired (its time to live passed) before it ended"}
		}
		select {
		case <-ctx.Done():
			return stop(ctx, cs, cur, h, "the turn was cancelled; kin asked the server to cancel the task")
		case <-time.After(interval(cur)):
		}
		next, err := get(ctx, cs, cur.TaskID, h.Timeout)
		if err != nil {
			if ctx.Err() != nil {
				return stop(ctx, cs, cur, h, "the turn was cancelled; kin asked the server to cancel the task")
			}
			return End{Outcome: Pending, Task: cur, Why: "kin lost track of the task: " + err.Error()}
		}
		if next.TaskID == "" {
			next.TaskID = cur.TaskID
		}
		cur = *next
	}
}

// answer puts the task's new questions to the person and sends the
// answers with tasks/update. stop ends Follow.
func answer(ctx context.Context, cs *mcp.ClientSession, cur *Task, h Hooks, answered map[string]bool, rounds *int) (End, bool) {
	out := mcp.InputResponseMap{}
	for id, req := range cur.InputRequests {
		if answered[id] {
			continue // asked before; the server has not caught up yet
		}
		p, ok := req.(*mcp.ElicitParams)
		if !ok || h.Ask == nil {
			cancel(cs, cur.TaskID, h.Timeout)
			return End{Outcome: Declined, Task: *cur, Why: "the task asked for input kin does not offer; kin asked the server to cancel it"}, true
		}
		*rounds++
		if *rounds > MaxInputRounds {
			cancel(cs, cur.TaskID, h.Timeout)
			return End{Outcome: Declined, Task: *cur, Why: fmt.Sprintf("the task asked more than %d questions; kin asked the server to cancel it", MaxInputRounds)}, true
		}
		ans := h.Ask(ctx, p)
		if ctx.Err() != nil {
			return stop(ctx, cs, *cur, h, "the turn was cancelled while the task waited for an answer; kin asked the server to cancel it"), true
		}
		if ans == nil || ans.Action != "accept" {
			if h.Leave != nil && h.Leave(ctx) {
				// Withdrawn because kin stops, not declined by the person.
				return left(*cur), true
			}
			cancel(cs, cur.TaskID, h.Timeout)
			return End{Outcome: Declined, Task: *cur, Why: "the person declined the question the task asked; kin asked the server to cancel it"}, true
		}
		answered[id] = true
		out[id] = ans
	}
	if len(out) == 0 {
		return End{}, false
	}
	rctx, done := context.WithTimeout(ctx, h.Timeout)
	defer done()
	if _, err := mcp.CallCustomMethod[*updateParams, *emptyResult](rctx, cs, "tasks/update", &updateParams{TaskID: cur.TaskID, InputResponses: out}); err != nil {
		return End{Outcome: Pending, Task: *cur, Why: "the answers could not be delivered: " + err.Error()}, true
	}
	return End{}, false
}

func get(ctx context.Context, cs *mcp.ClientSession, id string, timeout time.Duration) (*Task, error) {
	rctx, done := context.WithTimeout(ctx, timeout)
	defer done()
	r, err := mcp.CallCustomMethod[*getParams, *getResult](rctx, cs, "tasks/get", &getParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	// An answer about another task is no answer about this one: taking it
	// would report that task's status and hand its result to the model as
	// this call's, and poll it from then on. Nothing of it is used (its id
	// is the server's text, so it is not quoted either).
	if r.TaskID != "" && r.TaskID != id {
		return nil, ErrOtherTask
	}
	return &r.Task, nil
}

// ErrOtherTask is a tasks/get answered with another task than asked for.
var ErrOtherTask = errors.New("the server answered about another task than the one kin asked for")

// Get is one tasks/get (a kin that restarted looking at a task it had).
func Get(ctx context.Context, cs *mcp.ClientSession, id string) (*Task, error) {
	return get(ctx, cs, id, 30*time.Second)
}

// stop ends Follow once ctx ended: the task is left running when kin
// stops (h.Leave), else cancelled (why says so).
func stop(ctx context.Context, cs *mcp.ClientSession, cur Task, h Hooks, why string) End {
	if h.Leave != nil && h.Leave(ctx) {
		return left(cur)
	}
	cancel(cs, cur.TaskID, h.Timeout)
	return End{Outcome: Stopped, Task: cur, Why: why}
}

// left ends Follow with the task left running (Hooks.Leave said kin stops).
func left(cur Task) End {
	return End{Outcome: Left, Task: cur, Why: "kin stopped while the task ran; it was left running on the server for the next kin to follow"}
}

// cancel asks the server to cancel the task (cooperative; best effort,
// on a context of its own: the turn's may be over).
func cancel(cs *mcp.ClientSession, id string, timeout time.Duration) {
	ctx, done := context.WithTimeout(context.Background(), min(timeout, 5*time.Second))
	defer done()
	_, _ = mcp.CallCustomMethod[*cancelParams, *emptyResult](ctx, cs, "tasks/cancel", &cancelParams{TaskID: id})
}

func interval(t Task) time.Duration {
	d := DefaultPoll
	if t.PollIntervalMs != nil {
		d = time.Duration(*t.PollIntervalMs) * time.Millisecond
	}
	return min(max(d, MinPoll), MaxPoll)
}

// expired reports whether the task's time to live has passed since it was
// created (a backstop: the server may also report it failed).
func expired(t Task) bool {
	if t.TTLMs == nil || t.CreatedAt == "" {
		return false
	}
	created, err := time.Parse(time.RFC3339Nano, t.CreatedAt)
	if err != nil {
		return false
	}
	return time.Since(created) > time.Duration(*t.TTLMs)*time.Millisecond
}
