package rpc

// PROTOCOL.md, Turns: turn/start, turn/cancel, turn/undo and the
// notifications of a running turn (turn/plan among them).

// Notifications of a turn.
const (
	NotifyTurnStarted   = "turn/started"
	NotifyTurnDelta     = "turn/delta"
	NotifyTurnToolCall  = "turn/toolCall"
	NotifyTurnCompleted = "turn/completed"
	NotifyTurnPlan      = "turn/plan"
)

// Method of undo.
const MethodTurnUndo = "turn/undo"

// TurnStartParams is turn/start's params.
type TurnStartParams struct {
	SessionID string `json:"sessionId"`
	Input     string `json:"input"`
}

// TurnStartResult is turn/start's result. An input that names a command
// (/name) answers with what it did, and with a turnId only when it started
// a turn (an MCP prompt).
type TurnStartResult struct {
	TurnID  string         `json:"turnId,omitempty"`
	Command *CommandResult `json:"command,omitempty"`
}

// TurnCancelResult is turn/cancel's result.
type TurnCancelResult struct {
	Cancelled bool `json:"cancelled"`
}

// TurnStarted is turn/started's params.
type TurnStarted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Input     string `json:"input"`
}

// TurnDelta is turn/delta's params: a piece of assistant text.
type TurnDelta struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Text      string `json:"text"`
}

// TurnToolCall is turn/toolCall's params: a call and each change of its
// status.
type TurnToolCall struct {
	SessionID   string        `json:"sessionId"`
	TurnID      string        `json:"turnId"`
	CallID      string        `json:"callId"`
	Name        string        `json:"name"`
	Kind        string        `json:"kind"` // read, edit, execute, fetch, other
	Title       string        `json:"title,omitempty"`
	Arguments   string        `json:"arguments"`
	Status      string        `json:"status"`
	OutputDelta string        `json:"outputDelta,omitempty"`
	Output      string        `json:"output,omitempty"`
	Content     []ToolContent `json:"content,omitempty"`
	// Sandbox says how a command runs, from the moment it is prepared.
	Sandbox *SandboxUse `json:"sandbox,omitempty"`
}

// TurnCompleted is turn/completed's params.
type TurnCompleted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Status    string `json:"status"` // completed, cancelled, failed, limit
	Error     string `json:"error,omitempty"`
	Usage     Usage  `json:"usage"`
}

// Usage counts a turn's tokens.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// ToolContent is one piece of what a call produced, in the Agent Client
// Protocol's shapes: text, diff or terminal.
type ToolContent struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	Diff *Diff  `json:"diff,omitempty"`
}

// Diff is one file's change.
type Diff struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	Unified string `json:"unified"`
}

// PlanEntry is one step of the model's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`             // pending, in_progress, completed
	Priority string `json:"priority,omitempty"` // high, medium, low
}

// TurnPlan is turn/plan's params: the whole plan, replacing the last one.
type TurnPlan struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Entries   []PlanEntry `json:"entries"`
}

// TurnUndoParams is turn/undo's params; without turnId, the last turn that
// changed files (and is not undone yet).
type TurnUndoParams struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
}

// TurnUndoResult is turn/undo's result (and an undo history item's undo).
type TurnUndoResult struct {
	TurnID      string         `json:"turnId"`
	Restored    []string       `json:"restored"`
	Conflicts   []UndoConflict `json:"conflicts,omitempty"`
	NotUndoable []NotUndoable  `json:"notUndoable,omitempty"`
}

// UndoConflict is a file undo left as it is: changed since kin's tools
// wrote it. Diff goes from what kin left to what is there now.
type UndoConflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Diff   string `json:"diff,omitempty"`
}

// NotUndoable is a call of the turn whose changes undo cannot reverse.
type NotUndoable struct {
	CallID string `json:"callId"`
	Name   string `json:"name"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
}
