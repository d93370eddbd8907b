package acp

// SessionNotification is session/update's params.
type SessionNotification struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

// Session update kinds.
const (
	UpdateUserMessage      = "user_message_chunk"
	UpdateAgentMessage     = "agent_message_chunk"
	UpdateAgentThought     = "agent_thought_chunk"
	UpdateToolCall         = "tool_call"
	UpdateToolCallUpdate   = "tool_call_update"
	UpdatePlan             = "plan"
	UpdateCommands         = "available_commands_update"
	UpdateCurrentMode      = "current_mode_update"
	UpdateConfigOption     = "config_option_update"
	UpdateSessionInfo      = "session_info_update"
	UpdateUsage            = "usage_update"
	UpdateNotice           = "notice"
	UpdateCompaction       = "compaction_update"
	contentTypeText        = "text"
	contentTypeImage       = "image"
	contentTypeResourceRef = "resource_link"
	contentTypeResource    = "resource"
)

// ContentBlock is a piece of a message or of a tool call's content.
type ContentBlock struct {
	Type     string            `json:"type"` // text, image, resource_link, resource
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`
	MimeType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	Title    string            `json:"title,omitempty"`
	Size     *int64            `json:"size,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
}

// ResourceContents is an embedded resource: text or base64 blob.
type ResourceContents struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// TextBlock is a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: contentTypeText, Text: s} }

// ContentChunk is a message chunk update (user, agent, thought).
type ContentChunk struct {
	SessionUpdate string       `json:"sessionUpdate"`
	Content       ContentBlock `json:"content"`
	MessageID     string       `json:"messageId,omitempty"`
}

// Tool call statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// ToolCallContent is one item of a tool call's content: "content" (a
// content block), "diff" or "terminal".
type ToolCallContent struct {
	Type    string        `json:"type"`
	Content *ContentBlock `json:"content,omitempty"`
	Path    string        `json:"path,omitempty"`
	OldText *string       `json:"oldText,omitempty"`
	NewText *string       `json:"newText,omitempty"`
}

// Location is a file a tool call works on.
type Location struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// ToolCall is the tool_call update (the first report of a call) and, with
// SessionUpdate "tool_call_update", each later one. A tool_call_update
// carries only what changed, so every field but the id is optional there;
// a tool_call needs a title.
type ToolCall struct {
	SessionUpdate string            `json:"sessionUpdate,omitempty"`
	ToolCallID    string            `json:"toolCallId"`
	Title         string            `json:"title,omitempty"`
	Kind          string            `json:"kind,omitempty"`
	Status        string            `json:"status,omitempty"`
	Content       []ToolCallContent `json:"content,omitempty"`
	Locations     []Location        `json:"locations,omitempty"`
	RawInput      any               `json:"rawInput,omitempty"`
	RawOutput     any               `json:"rawOutput,omitempty"`
	Meta          Meta              `json:"_meta,omitempty"`
}

// PlanEntry is one step of the plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high, medium, low
	Status   string `json:"status"`   // pending, in_progress, completed
}

// Plan is the plan update: the whole plan each time.
type Plan struct {
	SessionUpdate string      `json:"sessionUpdate"`
	Entries       []PlanEntry `json:"entries"`
}

// AvailableCommand is one slash command.
type AvailableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitempty"`
}

// CommandInput says a command takes text after its name.
type CommandInput struct {
	Hint string `json:"hint"`
}

// AvailableCommandsUpdate lists the commands.
type AvailableCommandsUpdate struct {
	SessionUpdate     string             `json:"sessionUpdate"`
	AvailableCommands []AvailableCommand `json:"availableCommands"`
}

// CurrentModeUpdate says the mode changed.
type CurrentModeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	CurrentModeID string `json:"currentModeId"`
}

// ConfigOptionUpdate carries every config option as it is now.
type ConfigOptionUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// SessionInfoUpdate says the title (or the last update time) changed.
type SessionInfoUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Title         string `json:"title,omitempty"`
	UpdatedAt     string `json:"updatedAt,omitempty"`
}

// UsageUpdate is the context used and its size, in tokens.
type UsageUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Used          int64  `json:"used"`
	Size          int64  `json:"size"`
	// Cost is the session's cost so far, where the models have prices
	// (kin's spend limits).
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is ACP's cumulative session cost.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// NoticeUpdate is something the person should see (clients that advertise
// session.notices).
type NoticeUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`
	Severity      string `json:"severity"` // info, warning, error
	Title         string `json:"title"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// CompactionUpdate is a compaction's state (clients that advertise
// session.compaction): in_progress when it starts, then completed with the
// summary the model goes on from, failed with the error, or cancelled.
type CompactionUpdate struct {
	SessionUpdate string         `json:"sessionUpdate"`
	CompactionID  string         `json:"compactionId"`
	Status        string         `json:"status"`
	Summary       []ContentBlock `json:"summary,omitempty"`
	Error         string         `json:"error,omitempty"`
	Meta          Meta           `json:"_meta,omitempty"`
}

// PermissionOption is one choice of a permission request.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once, reject_always
}

// RequestPermissionRequest is session/request_permission's params.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCall           `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// RequestPermissionResponse is its result.
type RequestPermissionResponse struct {
	Outcome struct {
		Outcome  string `json:"outcome"` // selected, cancelled
		OptionID string `json:"optionId,omitempty"`
	} `json:"outcome"`
}

// ReadTextFileRequest is fs/read_text_file's params.
type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
}

// ReadTextFileResponse is its result.
type ReadTextFileResponse struct {
	Content string `json:"content"`
}

// WriteTextFileRequest is fs/write_text_file's params.
type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// CreateElicitationRequest is elicitation/create's params: a form
// (RequestedSchema) or a link (URL, ElicitationID), in a session.
type CreateElicitationRequest struct {
	SessionID       string         `json:"sessionId"`
	ToolCallID      string         `json:"toolCallId,omitempty"`
	Mode            string         `json:"mode"` // form, url
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requestedSchema,omitempty"`
	URL             string         `json:"url,omitempty"`
	ElicitationID   string         `json:"elicitationId,omitempty"`
	Meta            Meta           `json:"_meta,omitempty"`
}

// CompleteElicitationNotification says a URL-mode elicitation finished.
type CompleteElicitationNotification struct {
	ElicitationID string `json:"elicitationId"`
}

// CreateElicitationResponse is its result.
type CreateElicitationResponse struct {
	Action  string         `json:"action"` // accept, decline, cancel
	Content map[string]any `json:"content,omitempty"`
}
