package rpc

// PROTOCOL.md, Commands: commands/list, commands/changed, and what a
// turn/start that runs a command answers.

// Method and notification of this section.
const (
	MethodCommandsList    = "commands/list"
	NotifyCommandsChanged = "commands/changed"
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
	// /undo, session/configure's for /mode and /model, session/compact's
	// for /compact, {"entries"} for /plan, grants/list's for /grants,
	// mcp/list's for /mcp).
	Result any `json:"result,omitempty"`
	// Inserted is the text an MCP prompt sent as the question (the turn
	// is turnId).
	Inserted string `json:"inserted,omitempty"`
}

// PlanResult is /plan's result.
type PlanResult struct {
	Entries []PlanEntry `json:"entries"`
}
