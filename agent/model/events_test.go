package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"
)

// recordedEvents are event payloads of the shapes the Responses API
// streams (and the mock, agent/modeltest, records), with the variations a
// service may send: every event kind the client acts on, kinds it ignores,
// unknown kinds, and fields of unexpected types.
var recordedEvents = []struct {
	name string
	data string
	want *streamEvent // nil: only "same as the union" is checked
}{
	{"text delta", `{"content_index":0,"delta":"tok","item_id":"msg_1","logprobs":[],"output_index":0,"sequence_number":7,"type":"response.output_text.delta"}`,
		&streamEvent{Type: "response.output_text.delta", Delta: "tok"}},
	{"text delta, escapes and non-ASCII", `{"type":"response.output_text.delta","delta":"a\"b\\c\n\u00e9\ud83d\ude00 ünï","item_id":"msg_1"}`,
		&streamEvent{Type: "response.output_text.delta", Delta: "a\"b\\c\né😀 ünï"}},
	{"text delta, empty", `{"type":"response.output_text.delta","delta":""}`, &streamEvent{Type: "response.output_text.delta"}},
	{"text delta, null", `{"type":"response.output_text.delta","delta":null}`, &streamEvent{Type: "response.output_text.delta"}},
	{"text delta, no delta", `{"type":"response.output_text.delta"}`, &streamEvent{Type: "response.output_text.delta"}},
	{"text delta, logprobs filled", `{"type":"response.output_text.delta","delta":"x","logprobs":[{"token":"x","logprob":-0.1,"top_logprobs":[]}],"obfuscation":"ab"}`,
		&streamEvent{Type: "response.output_text.delta", Delta: "x"}},
	{"text delta, delta a number", `{"type":"response.output_text.delta","delta":5}`, nil},
	{"text delta, delta an object", `{"type":"response.output_text.delta","delta":{"text":"x"}}`, nil},
	{"text delta, type after delta", `{"delta":"late","type":"response.output_text.delta"}`, &streamEvent{Type: "response.output_text.delta", Delta: "late"}},
	{"text delta, key in other case", `{"type":"response.output_text.delta","Delta":"x"}`, nil},
	{"text delta, key twice", `{"type":"response.output_text.delta","delta":"first","delta":"second"}`, nil},
	{"text delta, invalid UTF-8", "{\"type\":\"response.output_text.delta\",\"delta\":\"a\xffb\"}", nil},
	{"reasoning summary delta", `{"delta":"**Looking**","item_id":"rs_1","output_index":0,"sequence_number":4,"summary_index":1,"type":"response.reasoning_summary_text.delta"}`,
		&streamEvent{Type: "response.reasoning_summary_text.delta", Delta: "**Looking**"}},
	{"summary part added, first", `{"item_id":"rs_1","output_index":0,"part":{"text":"","type":"summary_text"},"sequence_number":3,"summary_index":0,"type":"response.reasoning_summary_part.added"}`,
		&streamEvent{Type: "response.reasoning_summary_part.added"}},
	{"summary part added, second", `{"item_id":"rs_1","output_index":0,"part":{"text":"","type":"summary_text"},"summary_index":1,"type":"response.reasoning_summary_part.added"}`,
		&streamEvent{Type: "response.reasoning_summary_part.added", SummaryIndex: 1}},
	{"summary part added, index a string", `{"type":"response.reasoning_summary_part.added","summary_index":"1"}`, nil},
	{"summary part added, index a float", `{"type":"response.reasoning_summary_part.added","summary_index":1.0}`, nil},
	{"function call done", `{"item":{"arguments":"{\"path\":\"a.go\"}","call_id":"call_1","id":"fc_1","name":"read_file","status":"completed","type":"function_call"},"output_index":1,"sequence_number":9,"type":"response.output_item.done"}`,
		&streamEvent{Type: "response.output_item.done", Item: outputItem{Type: "function_call", ID: "fc_1", CallID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
	{"reasoning item done", `{"item":{"encrypted_content":"enc-1","id":"rs_1","summary":[{"text":"one","type":"summary_text"},{"text":"two","type":"summary_text"}],"type":"reasoning"},"output_index":0,"type":"response.output_item.done"}`,
		&streamEvent{Type: "response.output_item.done", Item: outputItem{Type: "reasoning", ID: "rs_1", Encrypted: "enc-1", Summary: []string{"one", "two"}}}},
	{"reasoning item done, no summary", `{"item":{"id":"rs_2","summary":[],"type":"reasoning"},"type":"response.output_item.done"}`, nil},
	{"message item done", `{"item":{"content":[{"annotations":[],"text":"hi","type":"output_text"}],"id":"msg_1","role":"assistant","status":"completed","type":"message"},"type":"response.output_item.done"}`, nil},
	{"function call arguments delta", `{"delta":"{\"pa","item_id":"fc_1","output_index":1,"type":"response.function_call_arguments.delta"}`, nil},
	{"function call arguments done", `{"arguments":"{\"path\":\"a.go\"}","item_id":"fc_1","type":"response.function_call_arguments.done"}`, nil},
	{"refusal delta", `{"content_index":0,"delta":"I can't","item_id":"msg_1","type":"response.refusal.delta"}`, &streamEvent{Type: "response.refusal.delta", Delta: "I can't"}},
	{"refusal delta, delta a number", `{"type":"response.refusal.delta","delta":1}`, nil},
	{"reasoning text delta", `{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"Let me ","sequence_number":5}`,
		&streamEvent{Type: "response.reasoning_text.delta", Delta: "Let me "}},
	{"reasoning text delta, key twice", `{"type":"response.reasoning_text.delta","delta":"a","delta":"b"}`, nil},
	{"message item added, phase", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant","phase":"commentary"}}`,
		&streamEvent{Type: "response.output_item.added", Item: outputItem{Type: "message", ID: "msg_1", Phase: "commentary"}}},
	{"message item done, phase and text", `{"type":"response.output_item.done","item":{"id":"msg_2","type":"message","status":"completed","role":"assistant","phase":"final_answer","content":[{"type":"output_text","annotations":[],"text":"Here are "},{"type":"output_text","annotations":[],"text":"the files."}]}}`,
		&streamEvent{Type: "response.output_item.done", Item: outputItem{Type: "message", ID: "msg_2", Phase: "final_answer", Text: "Here are the files."}}},
	{"message item done, a refusal", `{"type":"response.output_item.done","item":{"id":"msg_3","type":"message","status":"completed","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}}`,
		&streamEvent{Type: "response.output_item.done", Item: outputItem{Type: "message", ID: "msg_3", Refusal: "I can't help with that."}}},
	{"reasoning item done, reasoning text", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_3","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"think hard"}]}}`,
		&streamEvent{Type: "response.output_item.done", Item: outputItem{Type: "reasoning", ID: "rs_3", Reasoning: "think hard"}}},
	{"refusal done", `{"refusal":"I can't help with that.","type":"response.refusal.done"}`, nil},
	{"text done", `{"text":"tok tok","type":"response.output_text.done","logprobs":[]}`, nil},
	{"created", `{"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]},"type":"response.created"}`, nil},
	{"in progress, the request echoed", `{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","status":"in_progress","instructions":"You are kin.","tools":[{"type":"function","name":"read_file","parameters":{"type":"object","properties":{"path":{"type":"string"}}},"strict":false}],"output":[]}}`,
		&streamEvent{Type: "response.in_progress"}},
	{"created, type twice", `{"type":"response.created","type":"response.completed","response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":4}}}`, nil},
	{"completed", `{"response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0},"output_tokens":34,"output_tokens_details":{"reasoning_tokens":5},"total_tokens":46}},"sequence_number":20,"type":"response.completed"}`,
		&streamEvent{Type: "response.completed", Usage: Usage{InputTokens: 12, OutputTokens: 34}}},
	{"completed, the request echoed", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","instructions":"You are kin.","tools":[{"type":"function","name":"read_file","parameters":{"type":"object"},"strict":false}],"output":[{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}],"usage":{"input_tokens":5,"input_tokens_details":{"cached_tokens":2},"output_tokens":1}}}`,
		&streamEvent{Type: "response.completed", Usage: Usage{InputTokens: 5, OutputTokens: 1, CachedInputTokens: 2}, Output: []outputItem{{Type: "message", ID: "msg_1", Text: "done"}}}},
	{"completed, output twice", `{"type":"response.completed","response":{"output":[{"id":"a","type":"message","content":[]}],"output":[{"id":"b","type":"message","content":[]}]}}`, nil},
	{"completed, response twice", `{"type":"response.completed","response":{"output":[]},"response":{"usage":{"input_tokens":1}}}`, nil},
	{"completed, no usage", `{"response":{"id":"resp_1","status":"completed","output":[]},"type":"response.completed"}`, &streamEvent{Type: "response.completed"}},
	{"failed", `{"response":{"error":{"code":"server_error","message":"The model crashed."},"id":"resp_1","status":"failed"},"type":"response.failed"}`,
		&streamEvent{Type: "response.failed", Status: "failed", Failure: "The model crashed."}},
	{"incomplete", `{"response":{"id":"resp_1","incomplete_details":{"reason":"max_output_tokens"},"status":"incomplete"},"type":"response.incomplete"}`,
		&streamEvent{Type: "response.incomplete", Status: "incomplete", Reason: "max_output_tokens"}},
	{"incomplete, usage and output", `{"type":"response.incomplete","response":{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Part"}]}],"usage":{"input_tokens":7,"output_tokens":3,"total_tokens":10}}}`,
		&streamEvent{Type: "response.incomplete", Status: "incomplete", Reason: "content_filter", Usage: Usage{InputTokens: 7, OutputTokens: 3},
			Output: []outputItem{{Type: "message", ID: "msg_1", Text: "Part"}}}},
	{"completed, output only there", `{"type":"response.completed","response":{"id":"resp_1","status":"completed","output":[{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"fixture hello"}]},{"id":"fc_1","type":"function_call","call_id":"call_9","name":"shell","arguments":"{}"}],"usage":{"input_tokens":1,"output_tokens":2}}}`,
		&streamEvent{Type: "response.completed", Usage: Usage{InputTokens: 1, OutputTokens: 2},
			Output: []outputItem{{Type: "message", ID: "msg_1", Text: "fixture hello"}, {Type: "function_call", ID: "fc_1", CallID: "call_9", Name: "shell", Arguments: "{}"}}}},
	{"error event", `{"code":"rate_limit_exceeded","message":"Slow down.","param":null,"sequence_number":3,"type":"error"}`,
		&streamEvent{Type: "error", Message: "Slow down."}},
	{"unknown type", `{"type":"response.future_thing","delta":"not text","item":{"type":"function_call","name":"x"},"whatever":[1,2,{"a":null}]}`,
		&streamEvent{Type: "response.future_thing"}},
	{"no type", `{"delta":"orphan"}`, &streamEvent{}},
	{"type not a string", `{"type":7,"delta":"x"}`, nil},
	{"not an object", `["response.output_text.delta","x"]`, nil},
	{"a string", `"response.output_text.delta"`, nil},
	{"null", `null`, nil},
}

// TestLeanDecodingReadsEveryEventAsTheUnionDid: every recorded event reads
// the same through streamEvent as through openai-go's full event union,
// the way the client read every event before (the union is the oracle,
// and the events kin acts on also have their expected values pinned).
func TestLeanDecodingReadsEveryEventAsTheUnionDid(t *testing.T) {
	for _, tc := range recordedEvents {
		t.Run(tc.name, func(t *testing.T) {
			var lean streamEvent
			leanErr := json.Unmarshal([]byte(tc.data), &lean)
			var u responses.ResponseStreamEventUnion
			unionErr := json.Unmarshal([]byte(tc.data), &u)
			if (leanErr == nil) != (unionErr == nil) {
				t.Fatalf("lean decoding error %v, union error %v", leanErr, unionErr)
			}
			if unionErr != nil {
				return
			}
			if full := fromUnion(u); !reflect.DeepEqual(lean, full) {
				t.Fatalf("lean decoding read\n%+v\nthe union read\n%+v", lean, full)
			}
			if tc.want != nil && !reflect.DeepEqual(lean, *tc.want) {
				t.Fatalf("read\n%+v\nwant\n%+v", lean, *tc.want)
			}
		})
	}
}

// TestMalformedEventDataIsASyntaxError: data that is not JSON fails
// decoding with encoding/json's syntax error, which explain() names for a
// person ("sent an event that is not valid JSON").
func TestMalformedEventDataIsASyntaxError(t *testing.T) {
	for _, data := range []string{`{"type":"response.output_text.delta","delta":"x"`, `not json`, `{"type":"response.output_text.delta","delta":"x"}}`, ``} {
		var e streamEvent
		err := json.Unmarshal([]byte(data), &e)
		var syn *json.SyntaxError
		if !errors.As(err, &syn) {
			t.Errorf("%q: error %v (%T), want a *json.SyntaxError", data, err, err)
		}
	}
}

// TestDeltaEventsSkipTheUnion: the events that come once per token are
// decoded without openai-go's union (which allocates several times as
// often per event): the point of streamEvent.
func TestDeltaEventsSkipTheUnion(t *testing.T) {
	data := []byte(`{"content_index":0,"delta":"tok","item_id":"msg_1","logprobs":[],"output_index":0,"sequence_number":7,"type":"response.output_text.delta"}`)
	var e streamEvent
	lean := testing.AllocsPerRun(100, func() { _ = json.Unmarshal(data, &e) })
	var u responses.ResponseStreamEventUnion
	union := testing.AllocsPerRun(100, func() { _ = json.Unmarshal(data, &u) })
	if e.Delta != "tok" || lean*2 > union {
		t.Fatalf("a text delta took %.0f allocations (the union %.0f), delta %q", lean, union, e.Delta)
	}
}

// TestTypeOnlyEventsSkipTheUnion: the events the client reads only the type
// of (response.created and response.in_progress echo the prompt and every
// tool definition) are not decoded into openai-go's union either.
func TestTypeOnlyEventsSkipTheUnion(t *testing.T) {
	tools := strings.Repeat(`{"type":"function","name":"t","description":"a tool","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},`, 30)
	data := []byte(`{"type":"response.created","response":{"id":"resp_1","status":"in_progress","instructions":"You are kin.","tools":[` + strings.TrimSuffix(tools, ",") + `],"output":[]}}`)
	var e streamEvent
	lean := testing.AllocsPerRun(20, func() { _ = json.Unmarshal(data, &e) })
	var u responses.ResponseStreamEventUnion
	union := testing.AllocsPerRun(20, func() { _ = json.Unmarshal(data, &u) })
	if e.Type != "response.created" || lean*10 > union {
		t.Fatalf("response.created took %.0f allocations (the union %.0f), type %q", lean, union, e.Type)
	}
}

// TestCompletedEventSkipsTheEchoedRequest: response.completed is decoded
// without the request it echoes (the prompt, every tool definition).
func TestCompletedEventSkipsTheEchoedRequest(t *testing.T) {
	tools := strings.Repeat(`{"type":"function","name":"t","description":"a tool","parameters":{"type":"object","properties":{"path":{"type":"string"}}}},`, 30)
	data := []byte(`{"type":"response.completed","response":{"id":"resp_1","status":"completed","instructions":"You are kin.","tools":[` + strings.TrimSuffix(tools, ",") + `],"output":[],"usage":{"input_tokens":9,"output_tokens":2}}}`)
	var e streamEvent
	lean := testing.AllocsPerRun(20, func() { _ = json.Unmarshal(data, &e) })
	var u responses.ResponseStreamEventUnion
	union := testing.AllocsPerRun(20, func() { _ = json.Unmarshal(data, &u) })
	if e.Usage.InputTokens != 9 || lean*4 > union {
		t.Fatalf("response.completed took %.0f allocations (the union %.0f), usage %+v", lean, union, e.Usage)
	}
}

// sseServer answers every request with the given event payloads as a
// text/event-stream, one data line each.
func sseServer(t *testing.T, payloads ...string) *Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range payloads {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", gjson.Get(p, "type").Str, p)
		}
	}))
	t.Cleanup(srv.Close)
	return New(Config{APIKey: "sk-test", BaseURL: srv.URL, Model: "mock-1"}, nil)
}

// TestAStreamOfEveryKindReadsAsBefore: one answer with every event kind the
// client acts on, kinds it ignores and a kind nobody knows yet, through the
// real client: what the handlers and the response get.
func TestAStreamOfEveryKindReadsAsBefore(t *testing.T) {
	var payloads []string
	for _, tc := range recordedEvents {
		switch tc.name {
		case "text delta", "text delta, escapes and non-ASCII", "reasoning summary delta", "summary part added, first",
			"summary part added, second", "function call done", "reasoning item done", "message item done",
			"function call arguments delta", "refusal delta", "created", "unknown type", "no type", "completed":
			payloads = append(payloads, tc.data)
		}
	}
	c := sseServer(t, payloads...)
	var text, summary strings.Builder
	var done []Reasoning
	resp, err := c.Stream(context.Background(), Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{
		Text:          func(s string) { text.WriteString(s) },
		Reasoning:     func(s string) { summary.WriteString(s) },
		ReasoningDone: func(r Reasoning) { done = append(done, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Response{
		Text: "toka\"b\\c\né😀 ünï",
		// The refusal delta after the message's end starts a message of
		// its own.
		Messages:  []AssistantMessage{{Text: "toka\"b\\c\né😀 ünï"}, {Refusal: "I can't"}},
		Calls:     []Call{{CallID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
		Reasoning: []Reasoning{{ID: "rs_1", Summary: []string{"one", "two"}, Encrypted: "enc-1"}},
		Usage:     Usage{InputTokens: 12, OutputTokens: 34},
		Accepted:  true,
	}
	if !reflect.DeepEqual(*resp, want) || text.String() != want.Text || summary.String() != "**Looking**\n\n" ||
		!reflect.DeepEqual(done, want.Reasoning) {
		t.Fatalf("response %+v\ntext %q summary %q done %+v", *resp, text.String(), summary.String(), done)
	}
}

// TestABrokenEventEndsTheAnswerClearlyAndKeepsWhatCame: an event whose data
// is not JSON in the middle of an answer ends it with an error a person can
// read; the text that came before it is in the response (the turn records
// it), and the client goes on serving.
func TestABrokenEventEndsTheAnswerClearlyAndKeepsWhatCame(t *testing.T) {
	c := sseServer(t, recordedEvents[0].data, `{"type":"response.future_thing","x":1}`, `{"type":"response.output_text.delta","delta":"x"`,
		recordedEvents[0].data)
	for range 2 {
		var text strings.Builder
		resp, err := c.Stream(context.Background(), Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{Text: func(s string) { text.WriteString(s) }})
		if err == nil || !strings.Contains(err.Error(), "not valid JSON") || !strings.Contains(err.Error(), "nothing was retried") {
			t.Fatalf("error %v", err)
		}
		if resp == nil || resp.Text != "tok" || text.String() != "tok" {
			t.Fatalf("response %+v, deltas %q", resp, text.String())
		}
	}
}
