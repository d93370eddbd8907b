package agent

import (
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

// Turn statuses.
const (
	TurnCompleted = "completed"
	TurnCancelled = "cancelled"
	TurnFailed    = "failed"
	TurnLimit     = "limit"
	// TurnRefused ends a turn whose answer was the model's refusal to
	// answer (its text, shown as it streamed, is the refusal).
	TurnRefused = "refused"
)

// Tool-call statuses before the final one (tool.Status values follow).
const (
	CallPending          = "pending"
	CallAwaitingApproval = "awaiting_approval"
	CallRunning          = "running"
	// CallWorking is a running call whose work goes on elsewhere (an MCP
	// server's task): StatusMessage says where it stands.
	CallWorking = "working"
)

// Parent names the session, turn and delegate call a subagent works for.
// Every event of a subagent's turn carries it (zero for a person's
// session), so a front end shows the subagent's progress under that call.
type Parent = permission.Parent

// Subagent is what a delegate call's events say of its subagent: the
// session it runs in (empty while it waits for a free slot), its mode and
// model.
type Subagent struct {
	SessionID string
	Mode      permission.Mode
	Model     string
	// Waiting is set while maxRunning subagents run and this one waits for
	// one of them to end.
	Waiting bool
}

// TurnStarted is sent when a turn begins.
type TurnStarted struct {
	SessionID string
	TurnID    string
	Input     string
	// Parts are what the question attached, as history shows them.
	Parts []Part
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// ReasoningDelta is a piece of the model's reasoning summary.
type ReasoningDelta struct {
	SessionID string
	TurnID    string
	Text      string
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// Usage counts a turn's tokens so far; the context fields say how full the
// model's window was after its latest response, and how large it is.
type Usage struct {
	InputTokens   int64
	OutputTokens  int64
	ContextTokens int64
	ContextWindow int64
	// Spend (limits.go): the turn's cached input tokens (within
	// InputTokens) and cost, in Currency ("" when no model has a price);
	// Estimated says some counts are kin's estimate, Unpriced that some
	// went to a model without a price. SessionTokens and SessionCost are
	// the session's whole usage so far (every turn, and its subagents').
	CachedInputTokens int64
	Cost              float64
	Currency          string
	Estimated         bool
	Unpriced          bool
	SessionTokens     int64
	SessionCost       float64
}

// UsageUpdate is sent after every model response of a turn.
type UsageUpdate struct {
	SessionID string
	TurnID    string
	Usage
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// Delta is a piece of assistant text.
type Delta struct {
	SessionID string
	TurnID    string
	Text      string
	// Refusal says the text is the model's refusal to answer, not an
	// answer.
	Refusal bool
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// ToolCall is a call and each change of its status.
type ToolCall struct {
	SessionID   string
	TurnID      string
	CallID      string
	Name        string
	Kind        tool.Kind
	Title       string
	Arguments   string
	Status      string
	OutputDelta string
	Output      string
	Content     []tool.Content
	// Saw is what went to the model (set on a call's final report: the
	// exact text, its framing, what was cut and why).
	Saw *tool.Saw
	// Links are the resource links of an MCP result (final report).
	Links []tool.Link
	// StatusMessage goes with CallWorking: the task's status and message.
	StatusMessage string
	// Reason says, in the person's words, why a denied call was not run
	// (RefusedAskMode, RefusedCancelled, RefusedByPerson); set on the
	// final report of a denied call only.
	Reason string
	// Sandbox says how a command runs (confined, network, writable), from
	// the moment it is prepared.
	Sandbox *tool.Sandbox
	// Subagent is set on a delegate call once its subagent is known.
	Subagent *Subagent
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// TurnDone is sent once when a turn ends.
type TurnDone struct {
	SessionID string
	TurnID    string
	Status    string
	Error     string
	Usage     Usage
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// Notice is something a person should see.
type Notice struct {
	Level     string // info, warning, error
	Message   string
	Source    string
	SessionID string
	// Parent is set on a subagent's events (see Parent).
	Parent Parent
}

// Events is how the agent reports to its front end (questions to the person
// go through the gate's ask.Broker instead). Implementations must not block
// for long: they are called from turn goroutines.
type Events interface {
	TurnStarted(TurnStarted)
	Delta(Delta)
	ToolCall(ToolCall)
	Reasoning(ReasoningDelta)
	Usage(UsageUpdate)
	TurnDone(TurnDone)
	Notice(Notice)
	// Plan reports the model's whole plan after each update_plan call.
	Plan(PlanUpdate)
}

// Compaction statuses: a compaction is reported in_progress when it starts,
// then once more with how it ended.
const (
	CompactionInProgress = "in_progress"
	CompactionCompleted  = "completed"
	CompactionFailed     = "failed"
	CompactionCancelled  = "cancelled"
)

// Compaction is kin summarising a session's earlier conversation for the
// model (see compact.go): sent when it starts and when it ends, to a front
// end whose Events are CompactionEvents. The notice that says what it did
// is sent either way.
type Compaction struct {
	SessionID string
	TurnID    string // "" for one asked for between turns
	// ID names the compaction within the session (its two reports share it).
	ID     string
	Reason string // CompactAuto, CompactOverflow, CompactRequested
	Status string // CompactionInProgress, ...Completed, ...Failed, ...Cancelled
	// Summary is what the model goes on from (completed only).
	Summary string
	// Error says why it failed (failed only).
	Error string
}

// CompactionEvents is Events that also hear of compactions as they start
// and end (kin acp: ACP's compaction_update).
type CompactionEvents interface {
	Compaction(Compaction)
}
