// Package session keeps conversations on disk: one append-only JSONL log per
// session under $KIN_HOME/sessions, one record per event, synced as written.
//
// A log is the only truth about a session: resume rebuilds everything from
// it. It must never hold secrets (API keys, MCP headers or env values) and
// never rewrite a record once written.
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
)

// Usage counts tokens of a turn.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Record is one line of a session log. Fields are set by type; the rest stay
// empty so lines stay short.
type Record struct {
	Type   string    `json:"type"`
	Time   time.Time `json:"time"`
	TurnID string    `json:"turnId,omitempty"`

	SessionID string `json:"sessionId,omitempty"`
	Title     string `json:"title,omitempty"`
	Text      string `json:"text,omitempty"`

	CallID    string         `json:"callId,omitempty"`
	Name      string         `json:"name,omitempty"`
	Kind      tool.Kind      `json:"kind,omitempty"`
	Arguments string         `json:"arguments,omitempty"`
	Status    string         `json:"status,omitempty"`
	Output    string         `json:"output,omitempty"`
	Content   []tool.Content `json:"content,omitempty"`

	RequestID    string         `json:"requestId,omitempty"`
	ApprovalKind string         `json:"approvalKind,omitempty"`
	Decision     string         `json:"decision,omitempty"`
	Reason       string         `json:"reason,omitempty"`
	Approved     *tool.Approval `json:"approved,omitempty"` // what was shown when deciding

	Error string `json:"error,omitempty"`
	Usage *Usage `json:"usage,omitempty"`

	// For elicitations: which server asked, in which mode. The answer's
	// content is never recorded.
	Server string `json:"server,omitempty"`
	Mode   string `json:"mode,omitempty"`
}
