package rpc

// PROTOCOL.md, Elicitation: elicitation/request, elicitation/respond,
// elicitation/resolved.

// Notifications of elicitations.
const (
	NotifyElicitationRequest  = "elicitation/request"
	NotifyElicitationResolved = "elicitation/resolved"
)

// ElicitationField is one question of a form. Type is string, number,
// integer, boolean, enum (one of Enum) or multi_select (a list of Enum's
// values, MinItems to MaxItems of them); EnumNames, when set, are Enum's
// titles, index by index.
type ElicitationField struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"`
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumNames   []string `json:"enumNames,omitempty"`
	Format      string   `json:"format,omitempty"` // email, uri, date, date-time
	Pattern     string   `json:"pattern,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	MinItems    *int     `json:"minItems,omitempty"`
	MaxItems    *int     `json:"maxItems,omitempty"`
}

// ElicitationRequest is elicitation/request's params: an MCP server's
// question (Server), or kin's own from its ask tool (Source "kin", no
// Server, with the turn and call that ask).
type ElicitationRequest struct {
	RequestID string             `json:"requestId"`
	SessionID string             `json:"sessionId,omitempty"`
	Server    string             `json:"server,omitempty"`
	Source    string             `json:"source,omitempty"` // "kin" for kin's ask tool
	TurnID    string             `json:"turnId,omitempty"`
	CallID    string             `json:"callId,omitempty"`
	Mode      string             `json:"mode"` // form or url
	Purpose   string             `json:"purpose,omitempty"`
	Message   string             `json:"message"`
	Fields    []ElicitationField `json:"fields,omitempty"`
	URL       string             `json:"url,omitempty"`
	Nesting
}

// ElicitationRespondParams is elicitation/respond's params.
type ElicitationRespondParams struct {
	RequestID string         `json:"requestId"`
	Action    string         `json:"action"` // accept, decline, cancel
	Content   map[string]any `json:"content,omitempty"`
}

// ElicitationAnswerError is the error data of an elicitation/respond whose
// content does not fit the form (-32602): every field that does not.
type ElicitationAnswerError struct {
	Fields []ElicitationFieldError `json:"fields"`
}

// ElicitationFieldError is one answer that does not fit its field: Message
// says why, to follow the field's title ("must be at least 0"); Name may be
// a name that is not a field of the form.
type ElicitationFieldError struct {
	Name    string `json:"name"`
	Message string `json:"message"`
}

// ElicitationResolved is elicitation/resolved's params.
type ElicitationResolved struct {
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId,omitempty"`
	Action    string `json:"action"`
	// Reason: person, cancelled, disconnected, shutdown, call_ended (the
	// call that asked ended without it), server_gone (the server stopped
	// or its connection was lost).
	Reason string `json:"reason"`
	Nesting
}
