package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// objectSchema reports why a listed input schema cannot be a function's
// parameters ("" when it can): a model service takes only an object schema,
// `"type": "object"`, and one tool with another schema fails every request
// of the turn that offers it.
func objectSchema(schema json.RawMessage) string {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return "its input schema is not a JSON object"
	}
	t := string(bytes.TrimSpace(s.Type))
	if t == `"object"` {
		return ""
	}
	if t == "" {
		t = "missing"
	}
	return fmt.Sprintf(`its input schema is not an object schema (type %.40s, not "object"), which a model cannot take as a tool's parameters`, Label(t))
}

// sanitizeSchema returns the schema the model sees: every "description"
// and "title" text in it, at any depth, sanitised like a tool description
// (invisible characters stripped, capped, flagged when it reads like an
// instruction override). Property names, enum values and defaults are the
// server's data and are kept as they are: the call must send what the
// server expects. flagged reports a flagged text.
func sanitizeSchema(schema json.RawMessage) (out json.RawMessage, flagged bool, err error) {
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber() // numbers pass through as written
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false, err
	}
	v = sanitizeValue(v, &flagged)
	b, err := json.Marshal(v)
	return b, flagged, err
}

func sanitizeValue(v any, flagged *bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "description" || k == "title") {
				text, f := Sanitize(s)
				if f {
					*flagged = true
					text = FlagPrefix + " " + text
				}
				v[k] = text
				continue
			}
			v[k] = sanitizeValue(x, flagged)
		}
	case []any:
		for i, x := range v {
			v[i] = sanitizeValue(x, flagged)
		}
	}
	return v
}

// redactSchema passes every string of an input schema at any depth
// through redact (descriptions, titles, defaults, enums, examples;
// property names are kept, a call must use them). A schema that cannot be
// read is returned as it is (objectSchema and sanitizeSchema refuse it).
func redactSchema(schema json.RawMessage, redact func(string) string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return schema
	}
	changed := false
	v = redactValue(v, redact, &changed)
	if !changed {
		return schema
	}
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}

func redactValue(v any, redact func(string) string, changed *bool) any {
	switch v := v.(type) {
	case string:
		if r := redact(v); r != v {
			*changed = true
			return r
		}
	case map[string]any:
		for k, x := range v {
			v[k] = redactValue(x, redact, changed)
		}
	case []any:
		for i, x := range v {
			v[i] = redactValue(x, redact, changed)
		}
	}
	return v
}
