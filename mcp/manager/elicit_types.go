package manager

// ElicitRequest is a server's question (elicitation/request).
type ElicitRequest struct {
	Server string
	// SessionID, TurnID and CallID name the tool call in flight on that
	// server when there is exactly one (empty otherwise).
	SessionID, TurnID, CallID string
	Mode                      string // "form" or "url"
	// Purpose is "oauth" for kin's own OAuth sign-in of the server (mode
	// "url": URL is the authorization server's sign-in page); "" for a
	// question the server asked.
	Purpose string
	Message string // the server's text (sanitised, untrusted), or kin's for a sign-in
	Fields  []Field
	// URL is for mode "url": show it, never open or fetch it.
	URL           string
	ElicitationID string
}

// Field is one form field, flattened from the requested schema.
type Field struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"` // string, number, integer, boolean, enum
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	Format      string   `json:"format,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumNames   []string `json:"enumNames,omitempty"`
}

// ElicitResult is the person's answer: Action "accept" (with Content for a
// form), "decline" or "cancel".
type ElicitResult struct {
	Action  string
	Content map[string]any
}
