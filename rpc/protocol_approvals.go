package rpc

// PROTOCOL.md, Approvals: approval/request, approval/respond,
// approval/resolved.

// Notifications of approvals.
const (
	NotifyApprovalRequest  = "approval/request"
	NotifyApprovalResolved = "approval/resolved"
)

// ApprovalDetails is what the person sees of a call before deciding (and,
// in a history's decision item, what they saw).
type ApprovalDetails struct {
	Title       string      `json:"title"`
	Command     string      `json:"command,omitempty"`
	Cwd         string      `json:"cwd,omitempty"`
	Diffs       []Diff      `json:"diffs,omitempty"`
	Server      string      `json:"server,omitempty"`
	Destination string      `json:"destination,omitempty"`
	ServerTool  string      `json:"serverTool,omitempty"`
	Arguments   string      `json:"arguments,omitempty"`
	Warning     string      `json:"warning,omitempty"`
	Grant       *GrantScope `json:"grant,omitempty"`
	AlwaysAsk   bool        `json:"alwaysAsk,omitempty"`
	// Sandbox says, for a command, how it runs.
	Sandbox *SandboxUse `json:"sandbox,omitempty"`
}

// SandboxUse is how a command runs: confined or not, with network or not,
// and (confined) the folders it may change.
type SandboxUse struct {
	Confined bool     `json:"confined"`
	Network  bool     `json:"network"`
	Writable []string `json:"writable,omitempty"`
}

// GrantScope is what an "always allow" would cover. Key and Fingerprint
// are opaque to editors.
type GrantScope struct {
	Key string `json:"key"`
	// Fingerprint, for an MCP tool, identifies the definition shown.
	Fingerprint string `json:"fingerprint,omitempty"`
	Label       string `json:"label"`
}

// PermissionOption is one choice, in the Agent Client Protocol's shape.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once
}

// ApprovalRequest is approval/request's params.
type ApprovalRequest struct {
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId,omitempty"`
	TurnID    string `json:"turnId,omitempty"`
	CallID    string `json:"callId,omitempty"`
	// Kind is tool_call, server_launch or acknowledge_unknown.
	Kind     string `json:"kind"`
	Tool     string `json:"tool,omitempty"`
	ToolKind string `json:"toolKind,omitempty"`
	ApprovalDetails
	// For server launches.
	Transport string `json:"transport,omitempty"`
	Scope     string `json:"scope,omitempty"`

	Options []PermissionOption `json:"options"`
}

// ApprovalRespondParams is approval/respond's params. Permanent with
// decision allow_always is the first release's spelling of
// allow_always_permanent, accepted for one more release.
type ApprovalRespondParams struct {
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	Permanent bool   `json:"permanent,omitempty"`
}

// ApprovalResolved is approval/resolved's params.
type ApprovalResolved struct {
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId,omitempty"`
	Decision  string `json:"decision"`
	Reason    string `json:"reason"`
}
