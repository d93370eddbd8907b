package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// Input is a question: its text, or parts (text and the editor's context:
// files, selections, diagnostics, embedded resources, images).
type Input struct {
	Text  string
	Parts []Part
}

// TextInput is a question of text alone.
func TextInput(s string) Input { return Input{Text: s} }

// The shapes of parts are the session log's.
type (
	Part       = session.Part
	Range      = session.Range
	Position   = session.Position
	Diagnostic = session.Diagnostic
)

// What one question may attach: its parts' texts (a file part holds what
// was read of it) and its images (base64), so that the question fits one
// record of the session log with room to spare.
const (
	MaxInputText   = 1 << 20
	MaxInputImages = 5 << 20
)

// ImageTypes are the image types a question may attach (the ones the
// Responses API takes).
var ImageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// PartError is a part kin refuses; nothing of the question was sent.
type PartError struct {
	Index  int
	Type   string
	Reason string
}

func (e *PartError) Error() string {
	return fmt.Sprintf("invalid params: input[%d] (%s): %s", e.Index, e.Type, e.Reason)
}

// question is what a turn asks: the user record and the paths it touches
// (for their directories' instructions).
type question struct {
	rec     session.Record
	touched []string
}

// assemble checks the input and builds its record: a file part is read now,
// under the same rules as read_file (it is read by read_file), so that the
// model sees the file as it was when the person asked. Any bad part refuses
// the whole question.
//
// tools is asked only for a file part (the read_file tool is the
// service's): StartTurn's caller may hold locks the session's own tools
// take.
func assemble(in Input, env tool.Env, cfg model.Config, tools func() []tool.Tool, readResource func(server, uri string) (string, error)) (question, error) {
	if len(in.Parts) == 0 {
		if strings.TrimSpace(in.Text) == "" {
			return question{}, &PartError{Index: 0, Type: "text", Reason: "the question is empty"}
		}
		// A long question is cut when recorded, saying so (session.Fit).
		return question{rec: session.Record{Type: session.TypeUser, Text: in.Text}}, nil
	}
	var q question
	var texts []string
	textBytes, imageBytes, content := 0, 0, false
	for i, p := range in.Parts {
		bad := func(format string, args ...any) error {
			return &PartError{Index: i, Type: p.Type, Reason: fmt.Sprintf(format, args...)}
		}
		kept := Part{Type: p.Type}
		switch p.Type {
		case "text":
			kept.Text = p.Text
			if strings.TrimSpace(p.Text) != "" {
				texts = append(texts, p.Text)
				content = true
			}
		case "file":
			if p.Path == "" {
				return q, bad("path is required")
			}
			if err := checkRange(p.Range, false); err != nil {
				return q, bad("%v", err)
			}
			text, err := readPart(p, env, tools)
			if err != nil {
				return q, bad("%s: %v", p.Path, err)
			}
			kept.Path, kept.Range, kept.Text = p.Path, p.Range, text
			q.touched = append(q.touched, p.Path)
		case "selection":
			if p.Path == "" || p.Range == nil {
				return q, bad("path and range are required")
			}
			if err := checkRange(p.Range, true); err != nil {
				return q, bad("%v", err)
			}
			kept.Path, kept.Range, kept.Text = p.Path, p.Range, p.Text
			q.touched = append(q.touched, p.Path)
		case "diagnostics":
			if p.Path == "" || len(p.Items) == 0 {
				return q, bad("path and at least one item are required")
			}
			for j, d := range p.Items {
				if strings.TrimSpace(d.Message) == "" {
					return q, bad("items[%d]: message is required", j)
				}
				switch d.Severity {
				case "", "error", "warning", "information", "hint":
				default:
					return q, bad("items[%d]: severity %q is not error, warning, information or hint", j, d.Severity)
				}
				if err := checkRange(&p.Items[j].Range, true); err != nil {
					return q, bad("items[%d]: %v", j, err)
				}
			}
			kept.Path, kept.Items = p.Path, p.Items
			q.touched = append(q.touched, p.Path)
		case "resource":
			if p.URI == "" {
				return q, bad("uri is required")
			}
			kept.URI, kept.MimeType, kept.Text = p.URI, p.MimeType, p.Text
			if p.Server != "" {
				// An MCP server's resource: read now, from the server,
				// under its rules (resources.go).
				if readResource == nil {
					return q, bad("kin has no MCP servers here to read %s from", p.URI)
				}
				text, err := readResource(p.Server, p.URI)
				if err != nil {
					return q, bad("%v", err)
				}
				kept.Server, kept.MimeType, kept.Text = p.Server, "", text
			}
		case "image":
			if cfg.NoImages {
				return q, bad("the model %s does not take images (images is false for it in $KIN_HOME/settings.json)", cfg.Model)
			}
			if !slices.Contains(ImageTypes, p.MimeType) {
				return q, bad("mimeType %q is not one kin sends (%s)", p.MimeType, strings.Join(ImageTypes, ", "))
			}
			if p.Data == "" {
				return q, bad("data is empty")
			}
			if _, err := base64.StdEncoding.DecodeString(p.Data); err != nil {
				return q, bad("data is not base64 (%v)", err)
			}
			imageBytes += len(p.Data)
			if imageBytes > MaxInputImages {
				return q, bad("the question's images are more than kin takes (%d bytes of base64 in all)", MaxInputImages)
			}
			kept.MimeType, kept.Data = p.MimeType, p.Data
		case "":
			return q, bad("type is required (text, file, selection, diagnostics, resource or image)")
		default:
			return q, bad("unknown part type (kin takes text, file, selection, diagnostics, resource and image)")
		}
		if p.Type != "text" {
			content = true
		}
		textBytes += len(kept.Text)
		if textBytes > MaxInputText {
			return q, bad("the question's texts are more than kin takes (%d bytes in all)", MaxInputText)
		}
		q.rec.Parts = append(q.rec.Parts, kept)
	}
	if !content {
		return q, &PartError{Index: 0, Type: in.Parts[0].Type, Reason: "the question is empty"}
	}
	q.rec.Type, q.rec.Text = session.TypeUser, strings.Join(texts, "\n\n")
	return q, nil
}

// checkRange refuses a range that cannot be one (negative, or ending before
// it starts).
func checkRange(r *Range, required bool) error {
	if r == nil {
		if required {
			return fmt.Errorf("range is required")
		}
		return nil
	}
	s, e := r.Start, r.End
	if s.Line < 0 || s.Character < 0 || e.Line < 0 || e.Character < 0 || e.Line < s.Line || (e.Line == s.Line && e.Character < s.Character) {
		return fmt.Errorf("range %d:%d-%d:%d is not a range (zero-based lines and characters, end after start)", s.Line, s.Character, e.Line, e.Character)
	}
	return nil
}

// lines is the 1-based line span a range covers: an end at the start of a
// line (a selection of whole lines) does not take that line.
func lines(r *Range) (first, last int) {
	first, last = r.Start.Line+1, r.End.Line+1
	if r.End.Character == 0 && r.End.Line > r.Start.Line {
		last--
	}
	return first, last
}

// readPart reads a file part through the read_file tool, so what the model
// is attached is what read_file would show it (the editor's buffer when it
// has the file open), under its path rules (inside the workspace; confined
// reads only).
func readPart(p Part, env tool.Env, tools func() []tool.Tool) (string, error) {
	var rf tool.Tool
	for _, t := range tools() {
		if t.Spec().Name == "read_file" {
			rf = t
			break
		}
	}
	if rf == nil {
		return "", fmt.Errorf("kin has no read_file tool here, so it cannot attach files")
	}
	args := map[string]any{"path": p.Path}
	if p.Range != nil {
		first, last := lines(p.Range)
		args["offset"], args["limit"] = first, last-first+1
	}
	raw, _ := json.Marshal(args)
	ctx := context.Background()
	act, err := rf.Prepare(ctx, env, raw)
	if err != nil {
		return "", fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "read_file: "))
	}
	if act.Approval != nil {
		// a secret (the trust boundary's): read only when the person
		// approves the read itself, never attached along with a question
		why := act.Approval.Warning
		if why == "" {
			why = "reading it needs the person's approval"
		}
		return "", fmt.Errorf("%s It is not attached; ask for it to be read (kin asks you first), or paste what the model may see", why)
	}
	res := act.Run(ctx, nil)
	if res.Status != "" && res.Status != tool.StatusCompleted {
		return "", fmt.Errorf("%s", strings.TrimPrefix(res.Output, "read_file: "))
	}
	return res.Output, nil
}

// framed is a part as the model reads it: its text, or its content between
// tags naming what it is and where it comes from (an image is its data).
func framed(p Part) model.Content {
	at := func(tag string, attrs ...string) string {
		var b strings.Builder
		b.WriteString("<" + tag)
		for i := 0; i+1 < len(attrs); i += 2 {
			if attrs[i+1] != "" {
				fmt.Fprintf(&b, " %s=%q", attrs[i], attrs[i+1])
			}
		}
		b.WriteString(">\n")
		return b.String()
	}
	span := func(r *Range) string {
		if r == nil {
			return ""
		}
		a, z := lines(r)
		if a == z {
			return fmt.Sprint(a)
		}
		return fmt.Sprintf("%d-%d", a, z)
	}
	end := func(tag, text string) string {
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		return text + "</" + tag + ">"
	}
	switch p.Type {
	case "file":
		return model.Content{Text: at("file", "path", p.Path, "lines", span(p.Range)) + end("file", p.Text)}
	case "selection":
		return model.Content{Text: at("selection", "path", p.Path, "lines", span(p.Range)) + end("selection", p.Text)}
	case "diagnostics":
		var b strings.Builder
		for _, d := range p.Items {
			sev := d.Severity
			if sev == "" {
				sev = "problem"
			}
			fmt.Fprintf(&b, "%d:%d %s: %s", d.Range.Start.Line+1, d.Range.Start.Character+1, sev, d.Message)
			if d.Source != "" {
				fmt.Fprintf(&b, " (%s)", d.Source)
			}
			b.WriteByte('\n')
		}
		return model.Content{Text: at("diagnostics", "path", p.Path) + end("diagnostics", b.String())}
	case "resource":
		return model.Content{Text: at("resource", "server", p.Server, "uri", p.URI, "mimeType", p.MimeType) + end("resource", p.Text)}
	case "image":
		return model.Content{ImageMIME: p.MimeType, ImageData: p.Data}
	}
	return model.Content{Text: p.Text}
}
