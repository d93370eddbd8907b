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
	// UnsavedFiles, for a command: the files open in the editor whose
	// changes are not saved, which the command (reading the disk) does not
	// see.
	UnsavedFiles []string `json:"unsavedFiles,omitempty"`
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
	// Revision counts the times this request was sent again with what it
	// shows changed (the same requestId replaces the card); absent for the
	// first. approval/respond names the revision it answers.
	Revision int `json:"revision,omitempty"`
	// Kind is tool_call, server_launch, acknowledge_unknown, continue, limit,
	// project_trust or mcp_skill.
	Kind     string `json:"kind"`
	Tool     string `json:"tool,omitempty"`
	ToolKind string `json:"toolKind,omitempty"`
	ApprovalDetails
	// For server launches.
	Transport string `json:"transport,omitempty"`
	Scope     string `json:"scope,omitempty"`
	// ReadOnlyTools are the tools that trusting the server lets run without
	// asking, when kin has seen its tools (absent when it has not; allowing
	// it once lets none run unasked).
	ReadOnlyTools []string `json:"readOnlyTools,omitempty"`
	// Items are what a project_trust or mcp_skill request asks about.
	Items []TrustItem `json:"items,omitempty"`

	Options []PermissionOption `json:"options"`
	Nesting
}

// ApprovalRespondParams is approval/respond's params. Permanent with
// decision allow_always is the first release's spelling of
// allow_always_permanent, accepted for one more release.
type ApprovalRespondParams struct {
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	Permanent bool   `json:"permanent,omitempty"`
	// Revision is the request's revision the decision was given to (absent:
	// the first); an older one than kin shows now is refused.
	Revision int `json:"revision,omitempty"`
}

// ApprovalResolved is approval/resolved's params.
type ApprovalResolved struct {
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId,omitempty"`
	Decision  string `json:"decision"`
	Reason    string `json:"reason"`
	Nesting
}
