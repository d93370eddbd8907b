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

// TestANullErrorIsNoError: a top-level "error": null leaves an event (the
// rest of it as it came); an error with anything in it, or a null error
// deeper down, is left for the SDK.
func TestANullErrorIsNoError(t *testing.T) {
	cases := map[string]string{
		`{"id":"c","error":null,"choices":[]}`:      `{"id":"c","choices":[]}`,
		`{"id":"c","choices":[],"error":null}`:      `{"id":"c","choices":[]}`,
		`{"error" : null , "id":"c"}`:               `{ "id":"c"}`,
		`{"error":null}`:                            `{}`,
		`{"id":"c","error":{"message":"boom"}}`:     `{"id":"c","error":{"message":"boom"}}`,
		`{"id":"c","error":"boom"}`:                 `{"id":"c","error":"boom"}`,
		`{"response":{"error":null},"type":"x"}`:    `{"response":{"error":null},"type":"x"}`,
		`{"id":"c","error":null,"error":{"m":"x"}}`: `{"id":"c","error":{"m":"x"}}`,
		`[DONE]`: `[DONE]`,
	}
	for in, want := range cases {
		if got := string(withoutNullError([]byte(in))); got != want {
			t.Errorf("%s became %s, want %s", in, got, want)
		}
	}
}
