package chat

import "encoding/json"

// The shapes below mirror rpc/PROTOCOL.md, the contract. They are declared
// here rather than borrowed from the server's packages so that this front end
// reads the wire exactly as any other editor would.

type initializeParams struct {
	ProcessID        int               `json:"processId"`
	ClientInfo       clientInfo        `json:"clientInfo"`
	Capabilities     clientCaps        `json:"capabilities"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders,omitempty"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

type clientCaps struct {
	Approvals   bool            `json:"approvals"`
	Elicitation elicitationCaps `json:"elicitation"`
}

type elicitationCaps struct {
	Form bool `json:"form"`
	URL  bool `json:"url"`
}

type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

type initializeResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	ServerInfo      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Capabilities struct {
		MCP bool `json:"mcp"`
	} `json:"capabilities"`
	Model struct {
		Configured bool   `json:"configured"`
		Model      string `json:"model"`
		BaseURL    string `json:"baseUrl"`
		Missing    string `json:"missing"`
	} `json:"model"`
	WorkspaceFolders []string `json:"workspaceFolders"`
	// Sandbox is absent from a kin older than the command sandbox.
	Sandbox *struct {
		Mode      string `json:"mode"`
		Mechanism string `json:"mechanism"`
		Confined  bool   `json:"confined"`
	} `json:"sandbox"`
}

type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Title     string `json:"title"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
	Turns     int    `json:"turns"`
}

type sessionResult struct {
	Session sessionInfo `json:"session"`
}

type sessionListResult struct {
	Sessions []sessionInfo `json:"sessions"`
}

type sessionIDParams struct {
	SessionID string `json:"sessionId"`
}

type historyItem struct {
	Type      string          `json:"type"`
	TurnID    string          `json:"turnId"`
	Text      string          `json:"text"`
	CallID    string          `json:"callId"`
	Name      string          `json:"name"`
	Kind      string          `json:"kind"`
	Title     string          `json:"title"`
	Arguments string          `json:"arguments"`
	Status    string          `json:"status"`
	Output    string          `json:"output"`
	Decision  string          `json:"decision"`
	Reason    string          `json:"reason"`
	Error     string          `json:"error"`
	Approved  json.RawMessage `json:"approved"`
	Server    string          `json:"server"`
	Mode      string          `json:"mode"`
}

type resumeResult struct {
	Session sessionInfo       `json:"session"`
	History []historyItem     `json:"history"`
	Pending []json.RawMessage `json:"pending"`
}

type turnStartParams struct {
	SessionID string `json:"sessionId"`
	Input     string `json:"input"`
}

type turnStartResult struct {
	TurnID string `json:"turnId"`
}

type turnCancelResult struct {
	Cancelled bool `json:"cancelled"`
}

type turnDelta struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Text      string `json:"text"`
}

type toolCall struct {
	SessionID   string `json:"sessionId"`
	TurnID      string `json:"turnId"`
	CallID      string `json:"callId"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Title       string `json:"title"`
	Arguments   string `json:"arguments"`
	Status      string `json:"status"`
	OutputDelta string `json:"outputDelta"`
	Output      string `json:"output"`
}

type turnCompleted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	Status    string `json:"status"`
	Error     string `json:"error"`
}

type option struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

type diff struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
	Unified string `json:"unified"`
}

type grantScope struct {
	Key   string `json:"key"`
	Label string `json:"label"`
}

type approvalRequest struct {
	RequestID   string      `json:"requestId"`
	SessionID   string      `json:"sessionId"`
	TurnID      string      `json:"turnId"`
	CallID      string      `json:"callId"`
	Kind        string      `json:"kind"`
	Tool        string      `json:"tool"`
	ToolKind    string      `json:"toolKind"`
	Title       string      `json:"title"`
	Command     string      `json:"command"`
	Cwd         string      `json:"cwd"`
	Diffs       []diff      `json:"diffs"`
	Server      string      `json:"server"`
	ServerTool  string      `json:"serverTool"`
	Destination string      `json:"destination"`
	Arguments   string      `json:"arguments"`
	Warning     string      `json:"warning"`
	Grant       *grantScope `json:"grant"`
	AlwaysAsk   bool        `json:"alwaysAsk"`
	Sandbox     *sandboxUse `json:"sandbox"`
	Transport   string      `json:"transport"`
	Scope       string      `json:"scope"`
	Options     []option    `json:"options"`
}

// sandboxUse is how a command will run.
type sandboxUse struct {
	Confined bool     `json:"confined"`
	Network  bool     `json:"network"`
	Writable []string `json:"writable"`
}

type approvalRespondParams struct {
	RequestID string `json:"requestId"`
	Decision  string `json:"decision"`
	Permanent bool   `json:"permanent,omitempty"`
}

type approvalResolved struct {
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId"`
	Decision  string `json:"decision"`
	Reason    string `json:"reason"`
}

type elicitationField struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Default     any      `json:"default"`
	Enum        []string `json:"enum"`
	EnumNames   []string `json:"enumNames"`
	Format      string   `json:"format"`
	Minimum     *float64 `json:"minimum"`
	Maximum     *float64 `json:"maximum"`
	MinLength   *int     `json:"minLength"`
	MaxLength   *int     `json:"maxLength"`
}

type elicitationRequest struct {
	RequestID string             `json:"requestId"`
	SessionID string             `json:"sessionId"`
	Server    string             `json:"server"`
	Mode      string             `json:"mode"`
	Purpose   string             `json:"purpose"`
	Message   string             `json:"message"`
	Fields    []elicitationField `json:"fields"`
	URL       string             `json:"url"`
}

type elicitationRespondParams struct {
	RequestID string         `json:"requestId"`
	Action    string         `json:"action"`
	Content   map[string]any `json:"content,omitempty"`
}

type elicitationResolved struct {
	RequestID string `json:"requestId"`
	Action    string `json:"action"`
	Reason    string `json:"reason"`
}

type mcpStatus struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Tools  int    `json:"tools"`
	Error  string `json:"error"`
}

type notice struct {
	Level     string `json:"level"`
	Message   string `json:"message"`
	Source    string `json:"source"`
	SessionID string `json:"sessionId"`
}

type mcpServerRow struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"`
	Transport string `json:"transport"`
	Enabled   *bool  `json:"enabled"`
	State     string `json:"state"`
	Tools     int    `json:"tools"`
	Launch    string `json:"launch"`
	Trusted   bool   `json:"trusted"`
	LastError string `json:"lastError"`
	File      string `json:"file"`
}

type mcpListResult struct {
	Servers  []mcpServerRow `json:"servers"`
	Shadowed []mcpServerRow `json:"shadowed"`
	Foreign  []mcpServerRow `json:"foreign"`
	// Warnings are strings; early versions of the contract showed objects
	// ({file, server, problem}), which are read too.
	Warnings []json.RawMessage `json:"warnings"`
	Notices  []string          `json:"notices"`
}

type grantRow struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Key       string `json:"key"`
	Label     string `json:"label"`
	Scope     string `json:"scope"`
	SessionID string `json:"sessionId"`
}

type grantsListResult struct {
	Grants []grantRow `json:"grants"`
}

type grantIDParams struct {
	ID string `json:"id"`
}
