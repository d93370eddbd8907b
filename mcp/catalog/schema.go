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

// sanitizeSchema returns the schema the model sees: every string in it,
// at any depth, passed through redact (descriptions, titles, defaults,
// enums, examples; property names are kept, a call must use them), then
// every "description" and "title" text sanitised like a tool description
// (invisible characters stripped, capped, flagged when it reads like an
// instruction override). Property names, enum values and defaults are
// otherwise the server's data and are kept as they are: the call must send
// what the server expects. flagged reports a flagged text.
func sanitizeSchema(schema json.RawMessage, redact func(string) string) (out json.RawMessage, flagged bool, err error) {
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber() // numbers pass through as written
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false, err
	}
	v = sanitizeValue(v, redact, &flagged)
	b, err := json.Marshal(v)
	return b, flagged, err
}

func sanitizeValue(v any, redact func(string) string, flagged *bool) any {
	switch v := v.(type) {
	case string:
		return redact(v)
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "description" || k == "title") {
				// redacted before Sanitize caps it: a secret cut in two
				// no longer matches
				text, f := Sanitize(redact(s))
				if f {
					*flagged = true
					text = FlagPrefix + " " + text
				}
				v[k] = text
				continue
			}
			v[k] = sanitizeValue(x, redact, flagged)
		}
	case []any:
		for i, x := range v {
			v[i] = sanitizeValue(x, redact, flagged)
		}
	}
	return v
}
