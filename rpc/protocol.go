// Package rpc is kin's wire: JSON-RPC 2.0 with LSP framing (through
// sourcegraph/jsonrpc2), the method table, and the translation between
// protocol messages and the agent. PROTOCOL.md beside this file documents
// every method and notification; golden tests keep the two in step.
//
// Nothing but protocol frames may ever be written to the connection, and no
// notification, error or trace line may carry a secret.
package rpc

import (
	"encoding/json"

	"github.com/kin-dev/kin/agent/session"
)

// ProtocolVersion is bumped on incompatible changes.
const ProtocolVersion = "1"

// Error codes beyond JSON-RPC's own (see PROTOCOL.md).
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeNotInitialized   = -32002
	CodeRequestCancelled = -32800
	CodeSessionNotFound  = -32010
	CodeBusy             = -32011
	CodeNotConfigured    = -32012
	CodeNotFound         = -32013
	CodeConfigError      = -32014
)

// Notifications kin sends.
const (
	NotifyTurnStarted         = "turn/started"
	NotifyTurnDelta           = "turn/delta"
	NotifyTurnToolCall        = "turn/toolCall"
	NotifyTurnCompleted       = "turn/completed"
	NotifyTurnPlan            = "turn/plan"
	NotifyApprovalRequest     = "approval/request"
	NotifyApprovalResolved    = "approval/resolved"
	NotifyElicitationRequest  = "elicitation/request"
	NotifyElicitationResolved = "elicitation/resolved"
	NotifyMCPStatus           = "mcp/status"
	NotifyNotice              = "notice"
	NotifyLogMessage          = "log/message"
)

// WorkspaceFolder is LSP's.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ClientInfo names the editor.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// InitializeParams is initialize's params.
type InitializeParams struct {
	ProcessID        *int              `json:"processId,omitempty"`
	ClientInfo       *ClientInfo       `json:"clientInfo,omitempty"`
	Capabilities     json.RawMessage   `json:"capabilities,omitempty"`
	WorkspaceFolders []WorkspaceFolder `json:"workspaceFolders,omitempty"`
	RootURI          string            `json:"rootUri,omitempty"`
	RootPath         string            `json:"rootPath,omitempty"`
}

// ServerInfo names kin.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ModelInfo tells the editor whether turns can run. Never the key.
type ModelInfo struct {
	Configured bool   `json:"configured"`
	Model      string `json:"model"`
	BaseURL    string `json:"baseUrl,omitempty"`
	Missing    string `json:"missing,omitempty"`
}

// ElicitationCaps says which elicitation modes are rendered.
type ElicitationCaps struct {
	Form bool `json:"form"`
	URL  bool `json:"url"`
}

// ServerCapabilities lists what this kin offers.
type ServerCapabilities struct {
	Sessions    bool            `json:"sessions"`
	MCP         bool            `json:"mcp"`
	Approvals   bool            `json:"approvals"`
	Elicitation ElicitationCaps `json:"elicitation"`
	// TextDocuments says what kin does with the editor's buffers on this
	// connection (PROTOCOL.md "Documents").
	TextDocuments TextDocumentsServerCapabilities `json:"textDocuments"`
}

// SandboxInfo says how commands run: confined by which mechanism, or not
// and why.
type SandboxInfo struct {
	Mode      string `json:"mode"`                // auto, required, off
	Mechanism string `json:"mechanism,omitempty"` // bubblewrap, seatbelt
	Confined  bool   `json:"confined"`
	Reason    string `json:"reason,omitempty"` // why not confined
	Hint      string `json:"hint,omitempty"`   // what would confine them
}

// InitializeResult is initialize's result.
type InitializeResult struct {
	ProtocolVersion  string             `json:"protocolVersion"`
	ServerInfo       ServerInfo         `json:"serverInfo"`
	Capabilities     ServerCapabilities `json:"capabilities"`
	Model            ModelInfo          `json:"model"`
	WorkspaceFolders []string           `json:"workspaceFolders"`
	Sandbox          SandboxInfo        `json:"sandbox"`
}

// CancelParams is $/cancelRequest's params.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
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
}

// SessionResult wraps one session.
type SessionResult struct {
	Session session.Info `json:"session"`
}

// SessionListResult is session/list's result.
type SessionListResult struct {
	Sessions []session.Info `json:"sessions"`
}

// SessionIDParams names a session.
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
	Session session.Info          `json:"session"`
	History []session.HistoryItem `json:"history"`
	// Cursor is the before of the next older page (absent at the start).
	Cursor  string `json:"cursor,omitempty"`
	Pending []any  `json:"pending"`
	// RunningTurnID is the turn this kin runs on the session now.
	RunningTurnID string `json:"runningTurnId,omitempty"`
	// ReadOnly is set when turns cannot run on the session here (another
	// kin has it open, or its log cannot be written); ReadOnlyReason says
	// which.
	ReadOnly       bool   `json:"readOnly,omitempty"`
	ReadOnlyReason string `json:"readOnlyReason,omitempty"`
}

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

// ApprovalRespondParams is approval/respond's params.
type ApprovalRespondParams struct {
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	Permanent bool   `json:"permanent,omitempty"`
}

// Empty is the {} result.
type Empty struct{}

// LogMessage is log/message's params.
type LogMessage struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}
