package manager

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
)

type askHost struct {
	nopHost
	asked int
}

func (h *askHost) Elicit(context.Context, ElicitRequest) (ElicitResult, error) {
	h.asked++
	return ElicitResult{Action: "accept", Content: map[string]any{"x": "y"}}, nil
}

func TestElicitOutsideFlatSubsetDeclinedWithoutAsking(t *testing.T) {
	h := &askHost{}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
	for name, schema := range map[string]any{
		"nested":  map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "object", "properties": map[string]any{"y": map[string]any{"type": "string"}}}}},
		"array":   map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"a"}}}}},
		"ref":     map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "#/defs/a"}}},
		"root":    map[string]any{"type": "string"},
		"untyped": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{}}},
	} {
		res, err := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema}})
		if err != nil || res.Action != "decline" {
			t.Errorf("%s: %+v %v", name, res, err)
		}
	}
	if h.asked != 0 {
		t.Fatalf("asked %d times", h.asked)
	}
	// URL mode is relayed; kin never opens it.
	res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/x", ElicitationID: "e1"}})
	if h.asked != 1 || res.Action != "accept" || res.Content != nil {
		t.Fatalf("url mode: %+v asked %d", res, h.asked)
	}
}

func TestCheckAnswer(t *testing.T) {
	fields := []Field{{Name: "n", Type: "integer", Required: true}, {Name: "b", Type: "boolean"}, {Name: "e", Type: "enum", Enum: []string{"a"}}}
	for _, tc := range []struct {
		in map[string]any
		ok bool
	}{
		{map[string]any{"n": float64(3)}, true},
		{map[string]any{"n": float64(3), "b": true, "e": "a"}, true},
		{map[string]any{"b": true}, false},                 // required missing
		{map[string]any{"n": 3.5}, false},                  // not an integer
		{map[string]any{"n": float64(1), "e": "z"}, false}, // not in enum
		{map[string]any{"n": float64(1), "zz": 1}, false},  // unknown field
	} {
		if _, ok := checkAnswer(fields, tc.in); ok != tc.ok {
			t.Errorf("%v: ok=%v", tc.in, ok)
		}
	}
}
