package rpc

// PROTOCOL.md, Turns: turn/start, turn/cancel and the notifications of a
// running turn.

// Notifications of a turn.
const (
	NotifyTurnStarted   = "turn/started"
	NotifyTurnDelta     = "turn/delta"
	NotifyTurnToolCall  = "turn/toolCall"
	NotifyTurnCompleted = "turn/completed"
)

// TurnStartParams is turn/start's params.
type TurnStartParams struct {
	SessionID string `json:"sessionId"`
	Input     string `json:"input"`
}

// TurnStartResult is turn/start's result.
type TurnStartResult struct {
	TurnID string `json:"turnId"`
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
