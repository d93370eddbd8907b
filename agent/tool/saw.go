package tool

import "encoding/json"

// Saw says what of a call's result went to the model, for a person to
// check ("what the model saw"): the exact text (set by the turn, which
// adds the status line the model reads first), how it was framed, the
// structured content as it was sent, and every part kin cut or left out,
// with why. A tool fills in what only it knows (framing, cuts of its own);
// the turn adds its own cut and the text.
type Saw struct {
	// Text is exactly the function output the model received.
	Text string `json:"text,omitempty"`
	// Framing names the untrusted framing around the server's data
	// ("untrusted-mcp-result"), with the server and tool it names.
	Framing string `json:"framing,omitempty"`
	Server  string `json:"server,omitempty"`
	Tool    string `json:"tool,omitempty"`
	// StructuredContent is an MCP result's structuredContent as it went
	// to the model (redacted); Structured says how: "appended" (after the
	// content blocks, labelled), "sameAsText" (a text block already
	// carried the same JSON, so it was not repeated) or "only" (there were
	// no text blocks).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	Structured        string          `json:"structured,omitempty"`
	// Cuts are what kin cut or left out, and why.
	Cuts []Cut `json:"cuts,omitempty"`
}

// Cut is one part of a result the model did not get in full.
type Cut struct {
	// What: "output" (the text was cut to fit), "image", "audio",
	// "resource" (binary content summarised), "secrets" (a configured
	// secret was removed), "content" (a block of a kind kin does not know).
	What string `json:"what"`
	// Why, in the person's words.
	Why string `json:"why"`
	// Bytes is the part's length; Kept how much of it the model got.
	Bytes int `json:"bytes,omitempty"`
	Kept  int `json:"kept,omitempty"`
}

// AddCut appends a cut to s, making s if it is nil.
func (s *Saw) AddCut(c Cut) *Saw {
	if s == nil {
		s = &Saw{}
	}
	s.Cuts = append(s.Cuts, c)
	return s
}

// OutputPrefix tells the model how a call ended, before what it produced.
func OutputPrefix(status string) string {
	switch Status(status) {
	case StatusCompleted:
		return ""
	case StatusUnknown:
		return "[unknown: the outcome is not known; it may have happened and must not be retried automatically]\n"
	default:
		return "[" + status + "]\n"
	}
}

// ModelText is exactly the function output the model gets for a call that
// ended with status and output.
func ModelText(status, output string) string { return OutputPrefix(status) + output }

// Link is a resource an MCP server's result points to (a resource_link).
type Link struct {
	Server   string `json:"server"`
	URI      string `json:"uri"`
	Name     string `json:"name,omitempty"`
	Title    string `json:"title,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}
