package rpc

import (
	"encoding/json"
	"errors"
)

// PROTOCOL.md, Turns: turn/start, turn/cancel, turn/undo and the
// notifications of a running turn (turn/plan among them).

// Notifications of a turn.
const (
	NotifyTurnStarted   = "turn/started"
	NotifyTurnDelta     = "turn/delta"
	NotifyTurnReasoning = "turn/reasoning"
	NotifyTurnToolCall  = "turn/toolCall"
	NotifyTurnUsage     = "turn/usage"
	NotifyTurnCompleted = "turn/completed"
	NotifyTurnPlan      = "turn/plan"
)

// Method of undo.
const MethodTurnUndo = "turn/undo"

// TurnStartParams is turn/start's params. On the wire input is a string
// (Input) or a list of parts (Parts).
type TurnStartParams struct {
	SessionID string      `json:"sessionId"`
	Input     string      `json:"-"`
	Parts     []InputPart `json:"-"`
}

type turnStartWire struct {
	SessionID string          `json:"sessionId"`
	Input     json.RawMessage `json:"input"`
}

// MarshalJSON writes input as the string, or the parts when there are any.
func (p TurnStartParams) MarshalJSON() ([]byte, error) {
	var in any = p.Input
	if len(p.Parts) > 0 {
		in = p.Parts
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(turnStartWire{SessionID: p.SessionID, Input: b})
}

// UnmarshalJSON reads input as a string or a list of parts. A string (a
// question may be megabytes) is decoded in the one pass over the params.
func (p *TurnStartParams) UnmarshalJSON(b []byte) error {
	var w struct {
		SessionID string `json:"sessionId"`
		Input     any    `json:"input"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = TurnStartParams{SessionID: w.SessionID}
	switch in := w.Input.(type) {
	case nil:
		return nil
	case string:
		p.Input = in
		return nil
	case []any:
		var parts struct {
			Input []InputPart `json:"input"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		p.Parts = parts.Input
		return nil
	}
	return errors.New("input must be a string or a list of parts")
}

// InputPart is one part of a question: text, file, selection,
// diagnostics, resource or image (see PROTOCOL.md for which fields each
// takes). Ranges are LSP's (zero-based lines, UTF-16 characters).
type InputPart struct {
	Type  string `json:"type"`
	Text  string `json:"text,omitempty"`
	Path  string `json:"path,omitempty"`
	Range *Range `json:"range,omitempty"`
	URI   string `json:"uri,omitempty"`
	// Server, on a resource part, is the MCP server to read uri from
	// (kin reads it; the part's text is ignored).
	Server   string           `json:"server,omitempty"`
	MimeType string           `json:"mimeType,omitempty"`
	Data     string           `json:"data,omitempty"`
	Items    []DiagnosticItem `json:"items,omitempty"`
	// Bytes is, in history and turn/started, how long the content that is
	// left out there was.
	Bytes int `json:"bytes,omitempty"`
}

// DiagnosticItem is one problem the editor reports in a file.
type DiagnosticItem struct {
	Range    Range  `json:"range"`
	Severity string `json:"severity,omitempty"` // error, warning, information, hint
	Message  string `json:"message"`
	Source   string `json:"source,omitempty"`
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

// TurnStarted is turn/started's params: the question's text (its text
// parts, joined) and what it attached, as history keeps it.
type TurnStarted struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Input     string      `json:"input"`
	Parts     []InputPart `json:"parts,omitempty"`
	Nesting
}

// TurnReasoning is turn/reasoning's params: a piece of the model's
// reasoning summary.
type TurnReasoning struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Text      string `json:"text"`
	Nesting
}

// TurnUsage is turn/usage's params, sent after every model response: the
// turn's tokens so far and how full the model's window is.
type TurnUsage struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Usage
	Nesting
}

// TurnDelta is turn/delta's params: a piece of assistant text; Refusal
// marks text that is the model's refusal to answer.
type TurnDelta struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Text      string `json:"text"`
	Refusal   bool   `json:"refusal,omitempty"`
	Nesting
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
	// ModelSaw is what went to the model, on a call's final notification.
	ModelSaw *ModelSaw `json:"modelSaw,omitempty"`
	// Links are an MCP result's resource links, for the person to open
	// (the model reads them with read_mcp_resource).
	Links []ResourceLink `json:"links,omitempty"`
	// StatusMessage goes with status "working" (a call whose work goes on
	// elsewhere: an MCP server's task): where it stands, the server's text.
	StatusMessage string `json:"statusMessage,omitempty"`
	// Sandbox says how a command runs, from the moment it is prepared.
	Sandbox *SandboxUse `json:"sandbox,omitempty"`
	// Reason says why a denied call was not run, in the person's words
	// (the session's mode, a cancelled turn, the person's no): set on a
	// denied call's final notification only.
	Reason string `json:"reason,omitempty"`
	// Subagent is set on a delegate call (see PROTOCOL.md, Subagents).
	Subagent *SubagentInfo `json:"subagent,omitempty"`
	Nesting
}

// TurnCompleted is turn/completed's params.
type TurnCompleted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Status    string `json:"status"` // completed, cancelled, failed, limit, refused
	Error     string `json:"error,omitempty"`
	Usage     Usage  `json:"usage"`
	Nesting
}

// Usage counts a turn's tokens; ContextTokens is how many the model's
// window held after the latest response, ContextWindow its size.
type Usage struct {
	InputTokens   int64 `json:"inputTokens"`
	OutputTokens  int64 `json:"outputTokens"`
	ContextTokens int64 `json:"contextTokens"`
	ContextWindow int64 `json:"contextWindow"`
	// Spend (PROTOCOL.md, Spend limits): cached input tokens (within
	// inputTokens), the turn's cost and the session's, in currency (absent
	// when no model has a price), the session's tokens, and whether some
	// counts are kin's estimate or went to a model without a price.
	CachedInputTokens int64    `json:"cachedInputTokens,omitempty"`
	Cost              *float64 `json:"cost,omitempty"`
	SessionCost       *float64 `json:"sessionCost,omitempty"`
	Currency          string   `json:"currency,omitempty"`
	SessionTokens     int64    `json:"sessionTokens,omitempty"`
	Estimated         bool     `json:"estimated,omitempty"`
	Unpriced          bool     `json:"unpriced,omitempty"`
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
	TurnID string `json:"turnId"`
	// Question is the first words of the turn's question, to name the turn
	// for a person (absent when the conversation no longer holds it).
	Question    string         `json:"question,omitempty"`
	Restored    []string       `json:"restored"`
	Conflicts   []UndoConflict `json:"conflicts,omitempty"`
	NotUndoable []NotUndoable  `json:"notUndoable,omitempty"`
	// Error says the undo did not finish, and why: on the history item of
	// an undo kin was stopped in (killed while it put files back), some of
	// the turn's files may not be put back; undoing the turn again puts
	// back the rest.
	Error string `json:"error,omitempty"`
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
