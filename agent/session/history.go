package session

import "github.com/kin-dev/kin/agent/tool"

// HistoryItem is what an editor needs to redraw one entry of a session.
type HistoryItem struct {
	// Type is user, assistant, toolCall, decision, elicitation, turn,
	// mode, plan, undo, reasoning (Text is the summary), compaction (Text
	// is the summary, Reason auto, overflow or requested), instructions or
	// configure.
	Type   string `json:"type"`
	TurnID string `json:"turnId,omitempty"`
	Text   string `json:"text,omitempty"`
	// Refusal marks an assistant item whose text is the model's refusal.
	Refusal bool `json:"refusal,omitempty"`

	CallID    string         `json:"callId,omitempty"`
	Name      string         `json:"name,omitempty"`
	Kind      tool.Kind      `json:"kind,omitempty"`
	Title     string         `json:"title,omitempty"`
	Arguments string         `json:"arguments,omitempty"`
	Status    string         `json:"status,omitempty"`
	Output    string         `json:"output,omitempty"`
	Content   []tool.Content `json:"content,omitempty"`
	// Saw is what the model saw of a call's result (see tool.Saw).
	Saw *tool.Saw `json:"saw,omitempty"`
	// Links are an MCP result's resource links.
	Links []tool.Link `json:"links,omitempty"`

	RequestID string `json:"requestId,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// ApprovalKind is tool_call, server_launch or acknowledge_unknown.
	ApprovalKind string         `json:"approvalKind,omitempty"`
	Approved     *tool.Approval `json:"approved,omitempty"`

	Error string `json:"error,omitempty"`
	Usage *Usage `json:"usage,omitempty"`

	// elicitation: which server asked, in which mode (form, url); mode:
	// the session's new mode.
	Server string `json:"server,omitempty"`
	Mode   string `json:"mode,omitempty"`

	// Parts are what a question attached (not its text parts, which are in
	// Text): paths, ranges, uris and diagnostics, with the length of any
	// content left out.
	Parts []Part `json:"parts,omitempty"`
	// Model and Effort: for configure items.
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// Files and Changed: for instructions items.
	Files   []InstructionFile `json:"files,omitempty"`
	Changed []string          `json:"changed,omitempty"`
	// Source is "kin" for a question of kin's ask tool (elicitation).
	Source string `json:"source,omitempty"`

	// plan: the whole plan as it stood.
	Entries []PlanEntry `json:"entries,omitempty"`
	// undo: what undoing a turn did.
	Undo *Undo `json:"undo,omitempty"`
	// Subagent: for a delegate call, the subagent's session.
	Subagent *SubagentRef `json:"subagent,omitempty"`
	// rollback: which turns left the conversation and what undoing their
	// file changes did; fork: where the session came from.
	Rollback *Rollback `json:"rollback,omitempty"`
	Fork     *ForkRef  `json:"fork,omitempty"`
	// RolledBack marks an item of a turn a later rollback took out of the
	// conversation the model sees (the log keeps it).
	RolledBack bool `json:"rolledBack,omitempty"`
}

// Unknown is a call whose outcome is not known and not yet acknowledged.
type Unknown struct {
	CallID string
	Name   string
	TurnID string
	// Arguments are the call's arguments and Output the end of what its
	// result says (what kin knows of it), for the acknowledgement to show;
	// empty where the reader did not keep them.
	Arguments string
	Output    string
}
