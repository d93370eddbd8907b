package agent

import (
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
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
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Input     string `json:"input"`
}

// Delta is a piece of assistant text.
type Delta struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Text      string `json:"text"`
}

// ToolCall is a call and each change of its status.
type ToolCall struct {
	SessionID   string         `json:"sessionId"`
	TurnID      string         `json:"turnId"`
	CallID      string         `json:"callId"`
	Name        string         `json:"name"`
	Kind        tool.Kind      `json:"kind"`
	Title       string         `json:"title,omitempty"`
	Arguments   string         `json:"arguments"`
	Status      string         `json:"status"`
	OutputDelta string         `json:"outputDelta,omitempty"`
	Output      string         `json:"output,omitempty"`
	Content     []tool.Content `json:"content,omitempty"`
	// Sandbox says how a command runs (confined, network, writable), from
	// the moment it is prepared.
	Sandbox *tool.Sandbox `json:"sandbox,omitempty"`
}

// TurnDone is sent once when a turn ends.
type TurnDone struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Status    string      `json:"status"`
	Error     string      `json:"error,omitempty"`
	Usage     model.Usage `json:"usage"`
}

// Notice is something a person should see.
type Notice struct {
	Level     string `json:"level"` // info, warning, error
	Message   string `json:"message"`
	Source    string `json:"source,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// Events is how the agent reports to its front end. Implementations must not
// block for long: they are called from turn goroutines.
type Events interface {
	permission.Notifier
	TurnStarted(TurnStarted)
	Delta(Delta)
	ToolCall(ToolCall)
	TurnDone(TurnDone)
	Notice(Notice)
	// Plan reports the model's whole plan after each update_plan call.
	Plan(PlanUpdate)
}
