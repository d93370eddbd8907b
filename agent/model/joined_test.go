package model

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// TestJoinedEventsAreSplitOnlyWhenEachLineIsOne: an event whose data lines
// are each a JSON value (and together none) is the events it joins; an
// event whose lines make one JSON value, or one with a line that is no
// JSON, is left as it came (the SDK judges it).
func TestJoinedEventsAreSplitOnlyWhenEachLineIsOne(t *testing.T) {
	cases := []struct {
		data string
		want []string // nil: left whole
	}{
		{"{\"a\":1}\n", nil},
		{"{\"a\":1}\n{\"b\":2}\n", []string{"{\"a\":1}\n", "{\"b\":2}\n"}},
		{"{\"a\":1}\n[DONE]\n", []string{"{\"a\":1}\n", "[DONE]\n"}},
		{"{\n\"a\": 1\n}\n", nil},         // one value over three data lines
		{"{\"a\":1}\n{\"b\":\n", nil},     // a broken line: an error, as before
		{"{\"a\":1}\n\n{\"b\":2}\n", nil}, // an empty data line is no JSON value
		{"{\"a\":\"x\ny\"}\n", nil},       // neither line is a value
		{"null\n{\"b\":2}\n", []string{"null\n", "{\"b\":2}\n"}},
	}
	for _, c := range cases {
		got := joined(ssestream.Event{Type: "message", Data: []byte(c.data)})
		var parts []string
		for _, e := range got {
			if e.Type != "message" {
				t.Errorf("%q: an event's type became %q", c.data, e.Type)
			}
			parts = append(parts, string(e.Data))
		}
		if strings.Join(parts, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q split into %q, want %q", c.data, parts, c.want)
		}
	}
}
