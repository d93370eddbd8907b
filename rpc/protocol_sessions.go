package rpc

import (
	"encoding/json"
	"errors"
	"time"
)

// PROTOCOL.md, Sessions: session/new, session/list, session/resume,
// session/delete, session/configure, session/compact.

// session/compact's method (session/configure's is with its types below).
const MethodSessionCompact = "session/compact"

// SessionInfo is one session's summary.
type SessionInfo struct {
	SessionID string    `json:"sessionId"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	Turns     int       `json:"turns"`
	// Cwd and AdditionalDirectories are the session's workspace folders
	// (absent for a session recorded before sessions kept them).
	Cwd                   string   `json:"cwd,omitempty"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	// Mode is the session's mode (ask, agent, auto-edit); session/list's
	// rows leave it out.
	Mode string `json:"mode,omitempty"`
	// Origin says what made the session when it was not a person at an
	// editor: "chat-oneshot" (`kin chat "question"`), "chat-piped" (kin
	// chat reading a pipe); absent for a person's conversation.
	Origin string `json:"origin,omitempty"`
	// ParentID is, for a subagent's session, the session it worked for.
	ParentID string `json:"parentId,omitempty"`
	// Worktree is the session's git worktree (session/new's worktree),
	// in session/new's and session/resume's session object.
	Worktree *WorktreeInfo `json:"worktree,omitempty"`
}

// SessionNewParams is session/new's params.
type SessionNewParams struct {
	Title string `json:"title,omitempty"`
	// Cwd and AdditionalDirectories are the session's workspace folders
	// (absolute paths of directories); without them the session gets the
	// connection's workspace folders.
	Cwd                   string   `json:"cwd,omitempty"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	// Mode is ask, agent (the default) or auto-edit.
	Mode string `json:"mode,omitempty"`
	// Model and Effort are the session's choice (models/list; absent: the
	// default model, the service's effort).
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// Origin marks a session no person at an editor makes (see
	// SessionInfo.Origin): a short name of lower-case letters, digits and
	// dashes. Editors leave it out.
	Origin string `json:"origin,omitempty"`
	// Worktree asks for a git worktree of cwd's repository on a new
	// branch: true, or {"branch": name} (PROTOCOL.md, Worktrees).
	Worktree *WorktreeParam `json:"worktree,omitempty"`
}

// SessionListParams is session/list's params (all optional).
type SessionListParams struct {
	// Interactive lists only the sessions a person had at an editor or
	// kin chat's prompt: those with an origin are left out.
	Interactive bool `json:"interactive,omitempty"`
	// IncludeSubagents lists subagents' sessions too (each with its
	// parentId); without it they are left out.
	IncludeSubagents bool `json:"includeSubagents,omitempty"`
	// ParentID lists only the subagents' sessions of that session.
	ParentID string `json:"parentId,omitempty"`
	// Limit is the most rows one answer holds: 1 to 1000, 0 (absent) for
	// 50.
	Limit int `json:"limit,omitempty"`
	// Cursor is a previous answer's nextCursor: the rows after that
	// answer's last one.
	Cursor string `json:"cursor,omitempty"`
	// Cwd lists only the sessions whose first folder is this one (an
	// absolute path; symlinks resolved as for session/new).
	Cwd string `json:"cwd,omitempty"`
}

// SessionResult is session/new's result.
type SessionResult struct {
	Session SessionInfo `json:"session"`
	// Model and Effort are the session's (Effort absent: the service's).
	Model  string `json:"model"`
	Effort string `json:"effort,omitempty"`
	// Instructions are the project instructions files in force.
	Instructions []InstructionFile `json:"instructions"`
}

// InstructionFile is a project instructions file in force (AGENTS.md,
// CLAUDE.md, $KIN_HOME/AGENTS.md).
type InstructionFile struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Truncated is set when only the first 32 KiB are in force.
	Truncated bool `json:"truncated,omitempty"`
}

// SessionCompactResult is session/compact's result.
type SessionCompactResult struct {
	// Compacted is false when there was nothing to summarise.
	Compacted bool `json:"compacted"`
}

// SessionListResult is session/list's result.
type SessionListResult struct {
	Sessions []SessionInfo `json:"sessions"`
	// NextCursor is set when more rows follow: send it as cursor.
	NextCursor string `json:"nextCursor,omitempty"`
}

// SessionIDParams names a session (session/resume, session/delete,
// turn/cancel).
type SessionIDParams struct {
	SessionID string `json:"sessionId"`
}

// SessionResumeParams is session/resume's params: a page of history, the
// newest limit items before the before cursor.
type SessionResumeParams struct {
	SessionID string `json:"sessionId"`
	Limit     int    `json:"limit,omitempty"`
	Before    string `json:"before,omitempty"`
}

// SessionResumeResult is session/resume's result.
type SessionResumeResult struct {
	Session SessionInfo   `json:"session"`
	History []HistoryItem `json:"history"`
	// Cursor is the before of the next older page (absent at the start).
	Cursor  string           `json:"cursor,omitempty"`
	Pending []PendingRequest `json:"pending"`
	// RunningTurnID is the turn this kin runs on the session now.
	RunningTurnID string `json:"runningTurnId,omitempty"`
	// ReadOnly is set when turns cannot run on the session here (another
	// kin has it open, or its log cannot be written); ReadOnlyReason says
	// which.
	ReadOnly       bool   `json:"readOnly,omitempty"`
	ReadOnlyReason string `json:"readOnlyReason,omitempty"`
	// Model, Effort and Instructions as in session/new's result.
	Model        string            `json:"model"`
	Effort       string            `json:"effort,omitempty"`
	Instructions []InstructionFile `json:"instructions"`
	// Findings are the session's review findings, oldest first (see
	// review/finding).
	Findings []ReviewFinding `json:"findings,omitempty"`
}

// History item types.
const (
	HistoryUser        = "user"
	HistoryAssistant   = "assistant"
	HistoryToolCall    = "toolCall"
	HistoryDecision    = "decision"
	HistoryElicitation = "elicitation"
	HistoryTurn        = "turn"
	HistoryPlan        = "plan"
	HistoryMode        = "mode"
	HistoryUndo        = "undo"
	// The second release's.
	HistoryReasoning    = "reasoning"
	HistoryCompaction   = "compaction"
	HistoryInstructions = "instructions"
	HistoryConfigure    = "configure"
	// Branching's (PROTOCOL.md, Branching).
	HistorySteer    = "steer"
	HistoryRollback = "rollback"
	HistoryFork     = "fork"
)

// HistoryItem is one entry of a session, for an editor to redraw. Fields
// are set by Type (see PROTOCOL.md); the rest are left out.
type HistoryItem struct {
	Type   string `json:"type"`
	TurnID string `json:"turnId,omitempty"`
	Text   string `json:"text,omitempty"`
	// Refusal marks an assistant item whose text is the model's refusal.
	Refusal bool `json:"refusal,omitempty"`

	// toolCall (kind is the tool's kind, as in turn/toolCall)
	CallID    string         `json:"callId,omitempty"`
	Name      string         `json:"name,omitempty"`
	Kind      string         `json:"kind,omitempty"`
	Title     string         `json:"title,omitempty"`
	Arguments string         `json:"arguments,omitempty"`
	Status    string         `json:"status,omitempty"`
	Output    string         `json:"output,omitempty"`
	Content   []ToolContent  `json:"content,omitempty"`
	ModelSaw  *ModelSaw      `json:"modelSaw,omitempty"`
	Links     []ResourceLink `json:"links,omitempty"`

	// decision and elicitation
	RequestID string `json:"requestId,omitempty"`
	Decision  string `json:"decision,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// ApprovalKind is the approval/request's kind (tool_call,
	// server_launch, acknowledge_unknown, continue); Approved is what it
	// showed.
	ApprovalKind string           `json:"approvalKind,omitempty"`
	Approved     *ApprovalDetails `json:"approved,omitempty"`

	// turn
	Error string `json:"error,omitempty"`
	Usage *Usage `json:"usage,omitempty"`

	// elicitation (which server asked, in which mode: form or url; source
	// kin and no server for kin's ask tool); mode: the session's new mode
	Server string `json:"server,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Source string `json:"source,omitempty"`

	// plan: the whole plan after an update_plan call
	Entries []PlanEntry `json:"entries,omitempty"`
	// undo: what a turn/undo did
	Undo *TurnUndoResult `json:"undo,omitempty"`

	// user: what the question attached (not its text parts), contents
	// left out (bytes says how long they were).
	Parts []InputPart `json:"parts,omitempty"`
	// configure
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// instructions: the files in force, and what changed ("-path": no
	// longer in force). A compaction's reason is Reason (auto, overflow,
	// requested), its summary Text; a reasoning item's summary is Text.
	Files   []InstructionFile `json:"files,omitempty"`
	Changed []string          `json:"changed,omitempty"`
	// toolCall of delegate: its subagent's session and mode.
	Subagent *SubagentInfo `json:"subagent,omitempty"`
	// rollback: what a turn/rollback did; fork: where the session came
	// from; rolledBack marks an item of a turn a rollback took out of the
	// conversation the model sees.
	Rollback   *TurnRollbackResult `json:"rollback,omitempty"`
	Fork       *ForkRef            `json:"fork,omitempty"`
	RolledBack bool                `json:"rolledBack,omitempty"`
}

// PendingRequest is a question still waiting: exactly the params of the
// approval/request or elicitation/request that asked it (an elicitation
// has a mode, an approval has options), so an editor can show it again.
type PendingRequest struct {
	Approval    *ApprovalRequest
	Elicitation *ElicitationRequest
}

// MarshalJSON writes the request it holds.
func (p PendingRequest) MarshalJSON() ([]byte, error) {
	switch {
	case p.Approval != nil:
		return json.Marshal(p.Approval)
	case p.Elicitation != nil:
		return json.Marshal(p.Elicitation)
	}
	return nil, errors.New("rpc: an empty PendingRequest")
}

// UnmarshalJSON reads either request, told apart by elicitation's mode.
func (p *PendingRequest) UnmarshalJSON(b []byte) error {
	var probe struct {
		Mode *string `json:"mode"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if probe.Mode != nil {
		p.Elicitation = &ElicitationRequest{}
		return json.Unmarshal(b, p.Elicitation)
	}
	p.Approval = &ApprovalRequest{}
	return json.Unmarshal(b, p.Approval)
}

// Method of the session's settings.
const MethodSessionConfigure = "session/configure"

// SessionConfigureParams is session/configure's params: what to change
// (fields left out stay as they are).
type SessionConfigureParams struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode,omitempty"`
	// Model and Effort change between turns only (a models/list id, one
	// of its efforts).
	Model  *string `json:"model,omitempty"`
	Effort *string `json:"effort,omitempty"`
}

// SessionConfigureResult is session/configure's result: the session's
// configuration after the change (effort absent: none).
type SessionConfigureResult struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode"`
	Model     string `json:"model"`
	Effort    string `json:"effort,omitempty"`
}
