package calltool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/catalog"
)

// Render turns a tool result's content into text, in order: text blocks
// as they are, images, audio and binary resources marked as omitted, resource
// links listed (not opened), then the structured content (see render).
func Render(res *mcp.CallToolResult) string {
	s, _ := render(res)
	return s
}

// render is Render, also saying what the model will not get in full (binary
// blocks summarised) and how the structured content was sent. Neither
// content nor structuredContent is ever dropped silently: the specification
// has a tool that returns structured content also return it serialised in
// a text block (for clients that only read content), so when a text block
// already carries the same JSON it is not repeated, and otherwise the
// structured content follows the blocks, labelled.
func render(res *mcp.CallToolResult) (string, *tool.Saw) {
	var parts []string
	var cuts []tool.Cut
	hasText := false
	var texts []string
	for _, c := range res.Content {
		s, text := block(c)
		if text {
			hasText = true
			if t, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		if cut, ok := omitted(c); ok {
			cuts = append(cuts, cut)
		}
		parts = append(parts, s)
	}
	saw := mergeCuts(nil, cuts)
	if res.StructuredContent != nil {
		if saw == nil {
			saw = &tool.Saw{}
		}
		b, err := indented(res.StructuredContent)
		if err != nil {
			b, _ = json.Marshal(fmt.Sprintf("[structured content kin could not serialise: %v]", err))
		}
		saw.StructuredContent = b
		if len(b) > tool.MaxOutput {
			// The model gets at most this much of it anyway (the frame's
			// cut); what is recorded for the person is as long.
			head, _ := tool.Head(string(b), tool.MaxOutput)
			saw.StructuredContent, _ = json.Marshal(head)
		}
		switch {
		case !hasText:
			saw.Structured = "only"
			parts = append(parts, string(b))
		case sameJSON(texts, res.StructuredContent):
			saw.Structured = "sameAsText"
		default:
			saw.Structured = "appended"
			parts = append(parts, "[structuredContent]\n"+string(b))
		}
	}
	return strings.Join(parts, "\n"), saw
}

// sameJSON reports whether one of texts is v serialised (any spacing or
// key order).
func sameJSON(texts []string, v any) bool {
	want, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var norm any
	if json.Unmarshal(want, &norm) != nil {
		return false
	}
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) == nil && reflect.DeepEqual(got, norm) {
			return true
		}
	}
	return false
}

// omitted says what of a block the model gets only as a summary.
func omitted(c mcp.Content) (tool.Cut, bool) {
	const why = "binary content is summarised for the model (kind and length), never decoded"
	switch c := c.(type) {
	case *mcp.ImageContent:
		return tool.Cut{What: "image", Why: why, Bytes: len(c.Data)}, true
	case *mcp.AudioContent:
		return tool.Cut{What: "audio", Why: why, Bytes: len(c.Data)}, true
	case *mcp.EmbeddedResource:
		if _, text := resourceContents(c.Resource); !text && c.Resource != nil {
			return tool.Cut{What: "resource", Why: why, Bytes: len(c.Resource.Blob)}, true
		}
	case *mcp.ResourceLink, *mcp.TextContent, nil:
	default:
		return tool.Cut{What: "content", Why: fmt.Sprintf("a content block of a kind kin does not know (%T) is named, not sent", c)}, true
	}
	return tool.Cut{}, false
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

// maxLinks is how many resource links of one result are shown.
const maxLinks = 50

// Links are the resource_link blocks of a result, for the person to open
// (their names stripped of invisible characters, secrets removed).
func Links(b Binding, content []mcp.Content) []tool.Link {
	var out []tool.Link
	for _, c := range content {
		l, ok := c.(*mcp.ResourceLink)
		if !ok || l.URI == "" || len(out) >= maxLinks {
			continue
		}
		// redacted before Label cuts them: a secret cut in two no longer matches
		out = append(out, tool.Link{Server: b.Name(), URI: b.Redact(catalog.Strip(l.URI)), Name: catalog.Label(b.Redact(l.Name)),
			Title: catalog.Label(b.Redact(l.Title)), MIMEType: catalog.Label(l.MIMEType)})
	}
	return out
}

// mergeCuts adds cuts to saw (made when nil and there are any) as one cut
// per kind (the same What and Why), in the order each kind first came:
// Bytes and Kept are summed, and Why says how many parts it stands for.
// saw is recorded with the call and sent to the editor, and a result of
// 60,000 empty audio blocks (1 MiB, all a server may send) was 60,000 cuts,
// 6 MB in the session log and in a notification, for every such call.
func mergeCuts(saw *tool.Saw, cuts []tool.Cut) *tool.Saw {
	type kind struct{ what, why string }
	at := map[kind]int{}
	var merged []tool.Cut
	var n []int
	for _, c := range cuts {
		k := kind{c.What, c.Why}
		i, ok := at[k]
		if !ok {
			at[k] = len(merged)
			merged = append(merged, c)
			n = append(n, 1)
			continue
		}
		merged[i].Bytes += c.Bytes
		merged[i].Kept += c.Kept
		n[i]++
	}
	for i, c := range merged {
		if n[i] > 1 {
			c.Why = fmt.Sprintf("%d %s parts: %s", n[i], c.What, c.Why)
		}
		saw = saw.AddCut(c)
	}
	return saw
}

// maxIndentDepth is the deepest nesting structured content is indented to.
// Indenting writes two spaces per level on every line: a 2 kB value nested
// 990 deep became 2 MB, and a 100 kB reply of fifty of them 1 GB of kin's
// memory (a 1 MiB reply, about ten times that) before the text was cut
// to what the model may get.
const maxIndentDepth = 16

// indented is v serialised for the model: indented when it is at most
// tool.MaxOutput bytes compact and nested at most maxIndentDepth deep (its
// indented form is then bounded), compact, as the server sent it,
// otherwise.
func indented(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(b) > tool.MaxOutput {
		return b, err
	}
	if out, err := indentShallow(b); err == nil {
		return out, nil
	}
	return b, nil
}

// indentShallow is the JSON b indented, or b itself when it is nested
// deeper than maxIndentDepth (tool arguments and structured content
// share the limit).
func indentShallow(b []byte) ([]byte, error) {
	if depth(b) > maxIndentDepth {
		return b, nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// depth is the deepest nesting of objects and arrays in the JSON b.
func depth(b []byte) int {
	d, most := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}
