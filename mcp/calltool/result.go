package calltool

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Render turns a tool result's content into text, in order: text blocks
// as they are, images, audio and binary resources marked as omitted, resource
// links listed (not opened), and the structured content as JSON when no
// block carried text.
func Render(res *mcp.CallToolResult) string {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		s, text := block(c)
		hasText = hasText || text
		parts = append(parts, s)
	}
	if !hasText && res.StructuredContent != nil {
		if b, err := json.MarshalIndent(res.StructuredContent, "", "  "); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// block renders one content block and reports whether it carried text.
func block(c mcp.Content) (string, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text, true
	case *mcp.ImageContent:
		return fmt.Sprintf("[image omitted: %s, %d bytes]", mime(c.MIMEType), len(c.Data)), false
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio omitted: %s, %d bytes]", mime(c.MIMEType), len(c.Data)), false
	case *mcp.ResourceLink:
		s := fmt.Sprintf("[resource link, not opened: %s", c.URI)
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		return s + "]", false
	case *mcp.EmbeddedResource:
		return resourceContents(c.Resource)
	case nil:
		return "", false
	default:
		return fmt.Sprintf("[content omitted: %T]", c), false
	}
}

// resourceContents renders embedded or read resource contents.
func resourceContents(r *mcp.ResourceContents) (string, bool) {
	if r == nil {
		return "[empty resource]", false
	}
	if r.Blob != nil || r.Text == "" && r.MIMEType != "" && !strings.HasPrefix(r.MIMEType, "text/") {
		return fmt.Sprintf("[binary resource omitted: %s, %s, %d bytes]", r.URI, mime(r.MIMEType), len(r.Blob)), false
	}
	return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text), true
}

func mime(m string) string {
	if m == "" {
		return "unknown type"
	}
	return m
}

// RenderContent renders one content block the way Render does (a prompt's
// message, for example).
func RenderContent(c mcp.Content) string {
	s, _ := block(c)
	return s
}
