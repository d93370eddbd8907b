package acp

import "encoding/json"

// ProtocolVersion is the ACP major version kin speaks.
const ProtocolVersion = 1

// Methods the client calls (agent side).
const (
	MethodInitialize       = "initialize"
	MethodAuthenticate     = "authenticate"
	MethodSessionNew       = "session/new"
	MethodSessionLoad      = "session/load"
	MethodSessionResume    = "session/resume"
	MethodSessionList      = "session/list"
	MethodSessionClose     = "session/close"
	MethodSessionDelete    = "session/delete"
	MethodSessionPrompt    = "session/prompt"
	MethodSessionSetMode   = "session/set_mode"
	MethodSessionSetConfig = "session/set_config_option"
	// MethodSessionSetModel is ACP's unstable session model API, removed
	// from the schema but still what some clients' model pickers call
	// (agent-shell): kin serves it beside the model config option.
	MethodSessionSetModel = "session/set_model"
	MethodLogout          = "logout"
	NotifySessionCancel   = "session/cancel"
	NotifyCancelRequest   = "$/cancel_request"
)

// Methods kin calls (client side).
const (
	MethodRequestPermission = "session/request_permission"
	MethodReadTextFile      = "fs/read_text_file"
	MethodWriteTextFile     = "fs/write_text_file"
	MethodElicitationCreate = "elicitation/create"
	NotifyElicitationDone   = "elicitation/complete"
	NotifySessionUpdate     = "session/update"
)

// Error codes ACP names (the JSON-RPC ones are rpc's).
const (
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
)

// Meta is ACP's _meta: kin puts its own names under "kin".
type Meta map[string]any

// Implementation names a client or an agent.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeRequest is initialize's params.
type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
}

// ClientCapabilities is what the client offers.
type ClientCapabilities struct {
	FS struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
	Terminal bool `json:"terminal"`
	Auth     struct {
		Terminal bool `json:"terminal"`
	} `json:"auth"`
	Elicitation *struct {
		Form *struct{} `json:"form,omitempty"`
		URL  *struct{} `json:"url,omitempty"`
	} `json:"elicitation,omitempty"`
	Session *struct {
		Notices    *struct{} `json:"notices,omitempty"`
		Compaction *struct{} `json:"compaction,omitempty"`
	} `json:"session,omitempty"`
}

// InitializeResponse is initialize's result.
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	AgentInfo         Implementation    `json:"agentInfo"`
	Meta              Meta              `json:"_meta,omitempty"`
}

// AgentCapabilities is what kin offers.
type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
	Auth                *AgentAuth          `json:"auth,omitempty"`
}

// AgentAuth says which authentication methods beyond authenticate kin
// answers ({} logout: kin forgets the key `kin login` stored).
type AgentAuth struct {
	Logout *Empty `json:"logout,omitempty"`
}

// PromptCapabilities says which content blocks a prompt may hold.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// MCPCapabilities says which MCP transports a client may pass.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// Empty is an ACP capability object that is present or not ({} when it is).
type Empty struct{}

// SessionCapabilities lists the optional session methods kin answers.
type SessionCapabilities struct {
	List                  *Empty `json:"list,omitempty"`
	Resume                *Empty `json:"resume,omitempty"`
	Close                 *Empty `json:"close,omitempty"`
	Delete                *Empty `json:"delete,omitempty"`
	AdditionalDirectories *Empty `json:"additionalDirectories,omitempty"`
	// Fork offers ACP's unstable session/fork (fork.go).
	Fork *Empty `json:"fork,omitempty"`
}

// AuthMethod is one way to sign in: "terminal" (the client runs the agent's
// command with Args in a terminal) or an agent method (authenticate).
type AuthMethod struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type,omitempty"` // "terminal"; absent for an agent method
	Args        []string `json:"args,omitempty"`
}

// LogoutResponse is logout's result (kin's note in _meta).
type LogoutResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// AuthenticateRequest is authenticate's params.
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
}

// EnvVariable is one variable of a stdio MCP server.
type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HTTPHeader is one header of an http MCP server.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MCPServer is a server the client wants the session to use: stdio (no
// type), "http" or "sse".
type MCPServer struct {
	Type    string        `json:"type,omitempty"`
	Name    string        `json:"name"`
	Command string        `json:"command,omitempty"`
	Args    []string      `json:"args,omitempty"`
	Env     []EnvVariable `json:"env,omitempty"`
	URL     string        `json:"url,omitempty"`
	Headers []HTTPHeader  `json:"headers,omitempty"`
}

// NewSessionRequest is session/new's params.
type NewSessionRequest struct {
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []MCPServer `json:"mcpServers"`
	// Meta may ask for a git worktree: {"kin": {"worktree": true |
	// {"branch": name}}} (worktree.go).
	Meta Meta `json:"_meta,omitempty"`
}

// LoadSessionRequest is session/load's and session/resume's params.
type LoadSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []MCPServer `json:"mcpServers"`
}

// SessionModeState is the session's modes.
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

// SessionMode is one mode.
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ConfigOption is one session setting (a select).
type ConfigOption struct {
	ID           string         `json:"id"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Category     string         `json:"category,omitempty"` // mode, model, thought_level
	Type         string         `json:"type"`               // "select"
	CurrentValue string         `json:"currentValue"`
	Options      []ConfigChoice `json:"options"`
}

// ConfigChoice is one value of a select.
type ConfigChoice struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// NewSessionResponse is session/new's result.
type NewSessionResponse struct {
	SessionID     string             `json:"sessionId"`
	Modes         *SessionModeState  `json:"modes,omitempty"`
	Models        *SessionModelState `json:"models,omitempty"`
	ConfigOptions []ConfigOption     `json:"configOptions,omitempty"`
	// Meta says, for a session in a worktree, {"kin": {"worktree": {...}}}.
	Meta Meta `json:"_meta,omitempty"`
}

// LoadSessionResponse is session/load's and session/resume's result.
type LoadSessionResponse struct {
	Modes         *SessionModeState  `json:"modes,omitempty"`
	Models        *SessionModelState `json:"models,omitempty"`
	ConfigOptions []ConfigOption     `json:"configOptions,omitempty"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// SessionModelState is the session's models in ACP's unstable session
// model API (the model config option says the same).
type SessionModelState struct {
	CurrentModelID  string      `json:"currentModelId"`
	AvailableModels []ModelInfo `json:"availableModels"`
}

// ModelInfo is one model a session may use.
type ModelInfo struct {
	ModelID     string `json:"modelId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SetModelRequest is session/set_model's params.
type SetModelRequest struct {
	SessionID string `json:"sessionId"`
	ModelID   string `json:"modelId"`
}

// ListSessionsRequest is session/list's params.
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// SessionInfo is one row of session/list.
type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
	Meta                  Meta     `json:"_meta,omitempty"`
}

// ListSessionsResponse is session/list's result.
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// SessionIDRequest names a session (session/close, session/delete,
// session/cancel).
type SessionIDRequest struct {
	SessionID string `json:"sessionId"`
}

// SetModeRequest is session/set_mode's params.
type SetModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// SetConfigOptionRequest is session/set_config_option's params (a select's
// value; kin has no boolean options).
type SetConfigOptionRequest struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type,omitempty"`
	Value     json.RawMessage `json:"value"`
}

// SetConfigOptionResponse is session/set_config_option's result.
type SetConfigOptionResponse struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// PromptRequest is session/prompt's params.
type PromptRequest struct {
	SessionID string            `json:"sessionId"`
	Prompt    []json.RawMessage `json:"prompt"`
}

// Stop reasons.
const (
	StopEndTurn         = "end_turn"
	StopCancelled       = "cancelled"
	StopMaxTurnRequests = "max_turn_requests"
	StopRefusal         = "refusal"
)

// PromptResponse is session/prompt's result.
type PromptResponse struct {
	StopReason string `json:"stopReason"`
	Meta       Meta   `json:"_meta,omitempty"`
}
