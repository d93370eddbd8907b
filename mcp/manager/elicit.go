package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/catalog"
)

var declined = &mcp.ElicitResult{Action: "decline"}

// elicit relays a server's question to the person. A form outside the flat
// primitive subset is declined without asking; an answer that does not fit
// the form is declined as a whole (nothing partial is sent).
func (s *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	if p == nil {
		return declined, nil
	}
	r := ElicitRequest{Server: s.cfg.Name, Mode: p.Mode, Message: catalog.Strip(s.Redact(p.Message)), ElicitationID: p.ElicitationID}
	s.attribute(&r)
	switch p.Mode {
	case "url":
		r.URL = p.URL
	case "", "form":
		r.Mode = "form"
		fields, ok := flatten(p.RequestedSchema)
		if !ok {
			s.m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s asked for input with a form kin cannot show (not flat primitive fields); it was declined", s.disp.Name))
			return declined, nil
		}
		r.Fields = fields
	default:
		return declined, nil
	}
	res, err := s.m.host.Elicit(ctx, r)
	if err != nil {
		return declined, nil
	}
	switch res.Action {
	case "accept":
		if r.Mode == "url" {
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
		content, ok := checkAnswer(r.Fields, res.Content)
		if !ok {
			return declined, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	case "cancel":
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	return declined, nil
}

// attribute names the call in flight on this server, when there is one.
func (s *server) attribute(r *ElicitRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) != 1 {
		return
	}
	for e := range s.calls {
		r.SessionID, r.TurnID, r.CallID = e.SessionID, e.TurnID, e.CallID
	}
}

// propSchema is the part of a property schema the flat subset allows.
type propSchema struct {
	Type        string            `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []struct {
		Const *string `json:"const"`
		Title string  `json:"title"`
	} `json:"oneOf"`
	Default   any      `json:"default"`
	Minimum   *float64 `json:"minimum"`
	Maximum   *float64 `json:"maximum"`
	MinLength *int     `json:"minLength"`
	MaxLength *int     `json:"maxLength"`
	Format    string   `json:"format"`

	// Present only to be refused.
	Properties json.RawMessage `json:"properties"`
	Items      json.RawMessage `json:"items"`
	AnyOf      json.RawMessage `json:"anyOf"`
	AllOf      json.RawMessage `json:"allOf"`
	Ref        string          `json:"$ref"`
}

// flatten turns a requested schema into fields, one per property, sorted by
// name. ok is false for anything outside the flat-primitives subset.
func flatten(schema any) ([]Field, bool) {
	if schema == nil {
		return nil, true
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, false
	}
	var root struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(b, &root) != nil || (root.Type != "" && root.Type != "object") {
		return nil, false
	}
	required := map[string]bool{}
	for _, n := range root.Required {
		required[n] = true
	}
	names := make([]string, 0, len(root.Properties))
	for n := range root.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var fields []Field
	for _, n := range names {
		var p propSchema
		if json.Unmarshal(root.Properties[n], &p) != nil {
			return nil, false
		}
		f, ok := field(n, p)
		if !ok {
			return nil, false
		}
		f.Required = required[n]
		fields = append(fields, f)
	}
	return fields, true
}

func field(name string, p propSchema) (Field, bool) {
	if p.Properties != nil || p.Items != nil || p.AnyOf != nil || p.AllOf != nil || p.Ref != "" {
		return Field{}, false
	}
	f := Field{
		Name: name, Title: catalog.Label(p.Title), Description: catalog.Strip(p.Description),
		Default: p.Default, Minimum: p.Minimum, Maximum: p.Maximum,
		MinLength: p.MinLength, MaxLength: p.MaxLength, Format: p.Format, Type: p.Type,
	}
	switch {
	case len(p.Enum) > 0:
		if p.Type != "" && p.Type != "string" {
			return Field{}, false
		}
		for _, raw := range p.Enum {
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return Field{}, false
			}
			f.Enum = append(f.Enum, v)
		}
		if len(p.EnumNames) == len(f.Enum) {
			f.EnumNames = p.EnumNames
		}
		f.Type = "enum"
	case len(p.OneOf) > 0:
		if p.Type != "" && p.Type != "string" {
			return Field{}, false
		}
		for _, o := range p.OneOf {
			if o.Const == nil {
				return Field{}, false
			}
			f.Enum = append(f.Enum, *o.Const)
			f.EnumNames = append(f.EnumNames, o.Title)
		}
		f.Type = "enum"
	case p.Type == "string", p.Type == "number", p.Type == "integer", p.Type == "boolean":
	default:
		return Field{}, false
	}
	return f, true
}

// checkAnswer keeps the answer only when it fits the form exactly: every
// required field present, every value of its field's type, no extra keys.
func checkAnswer(fields []Field, content map[string]any) (map[string]any, bool) {
	out := map[string]any{}
	byName := map[string]Field{}
	for _, f := range fields {
		byName[f.Name] = f
	}
	for k, v := range content {
		f, ok := byName[k]
		if !ok {
			return nil, false
		}
		v, ok = fits(f, v)
		if !ok {
			return nil, false
		}
		out[k] = v
	}
	for _, f := range fields {
		if _, ok := out[f.Name]; f.Required && !ok {
			return nil, false
		}
	}
	return out, true
}

func fits(f Field, v any) (any, bool) {
	switch f.Type {
	case "string":
		s, ok := v.(string)
		return s, ok
	case "enum":
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		for _, e := range f.Enum {
			if e == s {
				return s, true
			}
		}
		return nil, false
	case "boolean":
		b, ok := v.(bool)
		return b, ok
	case "number", "integer":
		var x float64
		switch n := v.(type) {
		case float64:
			x = n
		case int:
			x = float64(n)
		case int64:
			x = float64(n)
		case json.Number:
			var err error
			if x, err = n.Float64(); err != nil {
				return nil, false
			}
		default:
			return nil, false
		}
		if f.Type == "integer" {
			if x != math.Trunc(x) {
				return nil, false
			}
			return int64(x), true
		}
		return x, true
	}
	return nil, false
}
