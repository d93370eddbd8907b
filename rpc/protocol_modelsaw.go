package rpc

import (
	"encoding/json"

	"github.com/kin-dev/kin/agent/tool"
)

// ModelSaw is what went to the model for a call's result ("what the model
// saw"), on a call's final turn/toolCall and on a toolCall history item:
// Text is exactly the function output the model got (the status line kin
// puts first, then the output); Framing names the untrusted framing around
// a server's data with the server and tool it names; StructuredContent is
// an MCP result's structuredContent as the model got it, Structured how
// (appended, sameAsText, only); Cuts list what the model did not get in
// full, and why.
type ModelSaw struct {
	Text              string          `json:"text"`
	Framing           string          `json:"framing,omitempty"`
	Server            string          `json:"server,omitempty"`
	Tool              string          `json:"tool,omitempty"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	Structured        string          `json:"structured,omitempty"`
	Cuts              []ModelCut      `json:"cuts,omitempty"`
}

// ModelCut is one part of a result the model did not get in full: what
// (output, image, audio, resource, secrets, content), why, its length and
// how much of it the model got.
type ModelCut struct {
	What  string `json:"what"`
	Why   string `json:"why"`
	Bytes int    `json:"bytes,omitempty"`
	Kept  int    `json:"kept,omitempty"`
}

func modelSaw(s *tool.Saw) *ModelSaw {
	if s == nil {
		return nil
	}
	out := &ModelSaw{Text: s.Text, Framing: s.Framing, Server: s.Server, Tool: s.Tool,
		StructuredContent: s.StructuredContent, Structured: s.Structured}
	for _, c := range s.Cuts {
		out.Cuts = append(out.Cuts, ModelCut{What: c.What, Why: c.Why, Bytes: c.Bytes, Kept: c.Kept})
	}
	return out
}

// ResourceLink is a resource an MCP result pointed to (a resource_link
// block): an editor opens it for the person with mcp/readResource, and the
// person can attach it (a resource input part); the model reads it with
// read_mcp_resource.
type ResourceLink struct {
	Server   string `json:"server"`
	URI      string `json:"uri"`
	Name     string `json:"name,omitempty"`
	Title    string `json:"title,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

func resourceLinks(ls []tool.Link) []ResourceLink {
	var out []ResourceLink
	for _, l := range ls {
		out = append(out, ResourceLink{Server: l.Server, URI: l.URI, Name: l.Name, Title: l.Title, MimeType: l.MIMEType})
	}
	return out
}
