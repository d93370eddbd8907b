package manager

import "github.com/kin-dev/kin/agent/ask"

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
	// Fields are the form's questions, read from the requested schema;
	// ask.Check is the rule an answer must pass.
	Fields []ask.Field
	// URL is for mode "url": show it, never open or fetch it.
	URL           string
	ElicitationID string
}

// ElicitResult is the person's answer: Action "accept" (with Content for a
// form), "decline" or "cancel".
type ElicitResult struct {
	Action  string
	Content map[string]any
}
