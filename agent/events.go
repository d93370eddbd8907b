package agent

import (
	"github.com/kin-dev/kin/agent/tool"
)

// Turn statuses.
const (
	TurnCompleted = "completed"
	TurnCancelled = "cancelled"
	TurnFailed    = "failed"
	TurnLimit     = "limit"
)

// Tool-call statuses before the final one (tool.Status values follow).
const (
	CallPending          = "pending"
	CallAwaitingApproval = "awaiting_approval"
	CallRunning          = "running"
)

// TurnStarted is sent when a turn begins.
type TurnStarted struct {
	SessionID string
	TurnID    string
	Input     string
	// Parts are what the question attached, as history shows them.
	Parts []Part
}

// ReasoningDelta is a piece of the model's reasoning summary.
type ReasoningDelta struct {
	SessionID string
	TurnID    string
	Text      string
}

// Usage counts a turn's tokens so far; the context fields say how full the
// model's window was after its latest response, and how large it is.
type Usage struct {
	InputTokens   int64
	OutputTokens  int64
	ContextTokens int64
	ContextWindow int64
}

// UsageUpdate is sent after every model response of a turn.
type UsageUpdate struct {
	SessionID string
	TurnID    string
	Usage
}

// Delta is a piece of assistant text.
type Delta struct {
	SessionID string
	TurnID    string
	Text      string
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
	// Sandbox says how a command runs (confined, network, writable), from
	// the moment it is prepared.
	Sandbox *tool.Sandbox
}

// TurnDone is sent once when a turn ends.
type TurnDone struct {
	SessionID string
	TurnID    string
	Status    string
	Error     string
	Usage     Usage
}

// Notice is something a person should see.
type Notice struct {
	Level     string // info, warning, error
	Message   string
	Source    string
	SessionID string
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
