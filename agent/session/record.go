// Package session keeps conversations on disk: one append-only JSONL log per
// session under $KIN_HOME/sessions, one record per event, and a small index
// of summaries beside the logs so pickers stay fast.
//
// A log is the only truth about a session: resume rebuilds everything from
// it, and the index is a cache that can always be rebuilt from the logs. One
// process owns a log at a time (a lock that dies with the process); others
// read it. Every record kin writes stays readable by kin: long fields are cut
// with a marker before they are written, and a reader skips, never fails on,
// a line it cannot use. A log must never hold secrets (API keys, MCP headers
// or env values), and a record once written is never rewritten; only a line
// that a failed write or a crash left unfinished is cut off.
package session

import (
	"time"

	"github.com/kin-dev/kin/agent/tool"
)

// Record types.
const (
	TypeSession  = "session" // first line: id, title, created
	TypeTitle    = "title"   // the session was named
	TypeUser     = "user"    // a question sent to the model
	TypeAssist   = "assistant"
	TypeCall     = "toolCall"    // the model asked for a call
	TypeResult   = "toolResult"  // how the call ended
	TypeDecision = "decision"    // a person's (or a grant's) decision
	TypeAck      = "ack"         // unknown outcomes acknowledged
	TypeElicit   = "elicitation" // an MCP server asked the person something
	TypeTurn     = "turn"        // how a turn ended
	TypeTask     = "task"        // an MCP call runs as a task on its server (before the first poll)

	TypeReasoning    = "reasoning"    // a reasoning item of an answer (summary, encrypted content)
	TypeConfigure    = "configure"    // the session's model or effort was set
	TypeInstructions = "instructions" // the project instructions in force, when they changed
	TypeCompaction   = "compaction"   // the conversation so far was summarised for the model
	TypeMode         = "mode"         // the session's mode changed
	TypePlan         = "plan"         // the model's plan, whole, as update_plan set it
	TypeUndo         = "undo"         // a turn's file changes were undone
	TypeSteer        = "steer"        // the person's words joined a running turn
	TypeRollback     = "rollback"     // turns left the conversation the model sees
	TypeFork         = "fork"         // the session was forked from another one
	TypeFinding      = "finding"      // a review turn's finding (report_finding)
)

// Usage counts tokens of a turn; the context fields are the last model
// response's (how full the model's window was) and the window.
type Usage struct {
	InputTokens   int64 `json:"inputTokens"`
	OutputTokens  int64 `json:"outputTokens"`
	ContextTokens int64 `json:"contextTokens,omitempty"`
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// What spend limits count (agent/spend): cached input (within
	// InputTokens), the cost in the configured currency, and whether some
	// counts are kin's estimate or went to a model without a price.
	CachedInputTokens int64   `json:"cachedInputTokens,omitempty"`
	Cost              float64 `json:"cost,omitempty"`
	Estimated         bool    `json:"estimated,omitempty"`
	Unpriced          bool    `json:"unpriced,omitempty"`
}

// Part is one part of a question that came as parts: text, a file (what
// was read of it), a selection, diagnostics, an embedded resource or an
// image. Text and Data hold what the model was sent, so a later request
// sends the same; history shows the rest (see HistoryItem).
type Part struct {
	Type  string `json:"type"` // text, file, selection, diagnostics, resource, image
	Text  string `json:"text,omitempty"`
	Path  string `json:"path,omitempty"`
	Range *Range `json:"range,omitempty"`
	URI   string `json:"uri,omitempty"`
	// Server, on a resource part, is the MCP server kin read it from.
	Server   string       `json:"server,omitempty"`
	MimeType string       `json:"mimeType,omitempty"`
	Data     string       `json:"data,omitempty"` // an image, base64
	Items    []Diagnostic `json:"items,omitempty"`
	// Bytes is, in history, how long the left-out content was.
	Bytes int `json:"bytes,omitempty"`
}

// Range is a range of a text document as LSP counts it: zero-based lines
// and characters, the end exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Position is a zero-based line and character.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Diagnostic is one problem an editor reported in a file.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity string `json:"severity,omitempty"` // error, warning, information, hint
	Message  string `json:"message"`
	Source   string `json:"source,omitempty"`
}

// InstructionFile is one project instructions file in force (AGENTS.md,
// CLAUDE.md, $KIN_HOME/AGENTS.md).
type InstructionFile struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Hash identifies the content, so a change is noticed.
	Hash string `json:"hash,omitempty"`
	// Cut is set when only the first part of the file is in force.
	Cut bool `json:"cut,omitempty"`
}

// Record is one line of a session log. Fields are set by type; the rest stay
// empty so lines stay short.
type Record struct {
	Type   string    `json:"type"`
	Time   time.Time `json:"time"`
	TurnID string    `json:"turnId,omitempty"`

	SessionID string `json:"sessionId,omitempty"`
	Title     string `json:"title,omitempty"`
	// Roots are the session's workspace folders (the first is its working
	// directory), on the session record.
	Roots []string `json:"roots,omitempty"`
	// Origin (session) says what made the session when it was not a person
	// at an editor: "chat-oneshot", "chat-piped" (see Info.Origin).
	Origin string `json:"origin,omitempty"`
	// Parent, on the session record of a subagent's session, names the
	// session and the delegate call it was started for.
	Parent *Lineage `json:"parent,omitempty"`
	Text   string   `json:"text,omitempty"`
	// Cont marks assistant text that continues the previous assistant
	// record of the turn: answers are recorded in pieces as they stream, so
	// what was shown survives a killed process. On a call, it marks a call
	// of the same answer as the call before it (the model asked for both
	// at once).
	Cont bool `json:"cont,omitempty"`
	// Refusal marks assistant text that is the model's refusal to answer;
	// Phase is an assistant message's phase as the model labelled it
	// (commentary, final_answer), on any of its pieces.
	Refusal bool   `json:"refusal,omitempty"`
	Phase   string `json:"phase,omitempty"`

	CallID    string         `json:"callId,omitempty"`
	Name      string         `json:"name,omitempty"`
	Kind      tool.Kind      `json:"kind,omitempty"`
	Arguments string         `json:"arguments,omitempty"`
	Status    string         `json:"status,omitempty"`
	Output    string         `json:"output,omitempty"`
	Content   []tool.Content `json:"content,omitempty"`
	// Saw, on a result, is the tool's account of what the model got
	// (framing, structured content, cuts); its Text is never stored, being
	// tool.ModelText of Status and Output.
	Saw *tool.Saw `json:"saw,omitempty"`
	// Links, on a result, are the resource links an MCP result gave.
	Links []tool.Link `json:"links,omitempty"`

	RequestID    string         `json:"requestId,omitempty"`
	ApprovalKind string         `json:"approvalKind,omitempty"`
	Decision     string         `json:"decision,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	Approved     *tool.Approval `json:"approved,omitempty"` // what was shown when deciding

	Error string `json:"error,omitempty"`
	Usage *Usage `json:"usage,omitempty"`

	// For elicitations: which server asked, in which mode. The answer's
	// content is never recorded. For the session record and mode records:
	// the session's mode (ask, agent, auto-edit; "" is agent).
	Server string `json:"server,omitempty"`
	Mode   string `json:"mode,omitempty"`
	// TaskID, on a task record, is the id of the MCP task the call (CallID)
	// runs as on Server: a kin that restarts polls it again (never sends
	// the call again). Only an id the server's redaction leaves whole is
	// recorded.
	TaskID string `json:"taskId,omitempty"`
	// Launch, on a task record, is the launch of Server the call ran on
	// (mcp/trust's Launch.Key, a digest): a kin that restarts follows the
	// task only when the name still launches that (an older kin's record
	// without it is not followed: the call is unknown).
	Launch string `json:"launch,omitempty"`

	// Parts are a question's parts, when it came as parts (Text then holds
	// its text parts, joined).
	Parts []Part `json:"parts,omitempty"`
	// For reasoning: the item's id at the service, its summary's parts and
	// its encrypted content (sent back only to the model that made it,
	// never shown); Text holds the reasoning itself where the service
	// showed it.
	ItemID    string   `json:"itemId,omitempty"`
	Summary   []string `json:"summary,omitempty"`
	Encrypted string   `json:"encrypted,omitempty"`
	// Field is the Chat Completions field a reasoning record's Text (the
	// reasoning itself) came in.
	Field string `json:"field,omitempty"`
	// Model and Effort: what a configure record set; on a reasoning or
	// compaction record, the model that made it.
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// Files are the instructions in force (instructions records), Changed
	// what changed since the last record: a path, or "-path" for a file no
	// longer in force.
	Files   []InstructionFile `json:"files,omitempty"`
	Changed []string          `json:"changed,omitempty"`
	// FromTurn is the first turn a compaction keeps whole (the summary in
	// Text replaces everything before it for the model).
	FromTurn string `json:"fromTurn,omitempty"`
	// Source is "kin" for a question kin's ask tool put to the person.
	Source string `json:"source,omitempty"`

	// Entries is a plan record's plan.
	Entries []PlanEntry `json:"entries,omitempty"`
	// Undo is an undo record's outcome. It names the undone turn itself
	// (never in TurnID, which would reopen that turn). An undo writes two
	// records: the first, with Status UndoStarted (undostart.go), names only
	// the turn; the second, without a Status, is the outcome (a log written
	// before kin wrote the first has only the second).
	Undo *Undo `json:"undo,omitempty"`
	// Subagent, on a delegate call's result, names the subagent's session
	// that did the work.
	Subagent *SubagentRef `json:"subagent,omitempty"`
	// Rollback is a rollback record's outcome (branching.go); like Undo it
	// names its turns itself, never in TurnID. A rollback writes two
	// records: the first, with Status RollbackStarted, only names the
	// turns; the second, without a Status, is the outcome (a log written
	// before kin wrote the first has only the second).
	Rollback *Rollback `json:"rollback,omitempty"`
	// Fork, on a fork record, names the session and turn a fork came from.
	Fork *ForkRef `json:"fork,omitempty"`
	// Finding is a finding record's finding (package review).
	Finding *Finding `json:"finding,omitempty"`
}

// Finding is one problem a review turn reported on a line range of a file
// (what review/finding sends). File is absolute, inside the reviewed
// repository; Range is zero-based, the end exclusive.
type Finding struct {
	// TurnID is the review turn's (set when read back from the log).
	TurnID   string `json:"-"`
	File     string `json:"file"`
	Range    Range  `json:"range"`
	Severity string `json:"severity"` // error, warning, info
	Title    string `json:"title"`
	Body     string `json:"body,omitempty"`
}

// SubagentRef names a subagent's session and the mode it ran in.
type SubagentRef struct {
	SessionID string `json:"sessionId"`
	Mode      string `json:"mode"`
}

// Lineage is where a subagent's session comes from: the parent session,
// the parent's turn and the delegate call that started it, and how deep it
// is (1: a child of a person's session).
type Lineage struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	CallID    string `json:"callId"`
	Depth     int    `json:"depth"`
}

// PlanEntry is one step of the model's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`             // pending, in_progress, completed
	Priority string `json:"priority,omitempty"` // high, medium, low
}

// Undo is what undoing a turn's file changes did.
type Undo struct {
	TurnID string `json:"turnId"` // the turn whose changes were undone
	// Question is the first words of the turn's question, to name the turn
	// for a person ("" when the conversation no longer holds it).
	Question string   `json:"question,omitempty"`
	Restored []string `json:"restored"` // files put back as they were (removed, for files the turn created)
	// Conflicts are files changed since by someone else: left as they are.
	Conflicts []UndoConflict `json:"conflicts,omitempty"`
	// NotUndoable names calls whose changes kin cannot undo (commands).
	NotUndoable []NotUndoable `json:"notUndoable,omitempty"`
	// Error says the undo did not finish, and why: UndoUnfinished on the
	// history item of an undo kin was stopped in. Records never carry it.
	Error string `json:"error,omitempty"`
}

// UndoConflict is a file undo left alone: its content now is not what
// kin's tools left, so putting back the old content would lose someone's
// change. Diff is the unified diff from what kin left to what is there now;
// Reason says it in words.
type UndoConflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Diff   string `json:"diff,omitempty"`
}

// NotUndoable is a call of the turn whose effects undo cannot reverse.
type NotUndoable struct {
	CallID string `json:"callId"`
	Name   string `json:"name"`
	Title  string `json:"title,omitempty"`
	Reason string `json:"reason"`
}
