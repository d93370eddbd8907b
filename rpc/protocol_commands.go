package rpc

// PROTOCOL.md, Commands (commands/list, commands/changed, a turn/start
// that runs a command), and the peer methods of Sessions and Turns
// (session/configure, turn/undo, turn/plan).

// Methods and notifications of this section.
const (
	MethodCommandsList     = "commands/list"
	NotifyCommandsChanged  = "commands/changed"
	MethodSessionConfigure = "session/configure"
	MethodTurnUndo         = "turn/undo"
)

// CommandsListParams is commands/list's params.
type CommandsListParams struct {
	SessionID string `json:"sessionId"`
}

// CommandsListResult is commands/list's result.
type CommandsListResult struct {
	Commands []CommandInfo `json:"commands"`
}

// CommandInfo is one command an editor can offer as /name.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// InputHint says what may follow the name.
	InputHint string `json:"inputHint,omitempty"`
	// Source is "kin" for kin's own, else the MCP server's name.
	Source    string            `json:"source"`
	Arguments []CommandArgument `json:"arguments,omitempty"`
}

// CommandArgument is one argument of an MCP prompt.
type CommandArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// CommandsChanged is commands/changed's params (empty: list again).
type CommandsChanged struct{}

// CommandResult is what a turn/start that ran a command did.
type CommandResult struct {
	Name string `json:"name"`
	// Text says what happened, for a person.
	Text string `json:"text"`
	// Result is the command's result where it has one (turn/undo's for
	// /undo, session/configure's for /mode, {"entries"} for /plan,
	// grants/list's for /grants, mcp/list's for /mcp).
	Result any `json:"result,omitempty"`
	// Inserted is the text an MCP prompt sent as the question (the turn
	// is turnId).
	Inserted string `json:"inserted,omitempty"`
}

// SessionConfigureParams is session/configure's params: what to change.
type SessionConfigureParams struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode,omitempty"`
}

// SessionConfigureResult is session/configure's result: the session's
// configuration after the change.
type SessionConfigureResult struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode"`
}

// TurnUndoParams is turn/undo's params; without turnId, the last turn that
// changed files (and is not undone yet).
type TurnUndoParams struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
}

// TurnUndoResult is turn/undo's result.
type TurnUndoResult struct {
	TurnID      string         `json:"turnId"`
	Restored    []string       `json:"restored"`
	Conflicts   []UndoConflict `json:"conflicts,omitempty"`
	NotUndoable []NotUndoable  `json:"notUndoable,omitempty"`
}

// UndoConflict is a file undo left as it is.
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

// PlanEntry is one step of the model's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority,omitempty"`
}

// TurnPlan is turn/plan's params: the whole plan.
type TurnPlan struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Entries   []PlanEntry `json:"entries"`
}

// PlanResult is /plan's result.
type PlanResult struct {
	Entries []PlanEntry `json:"entries"`
}
