package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
)

// service answers each request with the next of its bodies (Chat
// Completions chunks or Responses events, one data line each) and keeps the
// request bodies.
type service struct {
	mu     sync.Mutex
	bodies [][]string
	sent   []string
}

func newService(t *testing.T, api string, bodies ...[]string) (*Client, *service) {
	s := &service{bodies: bodies}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.sent = append(s.sent, string(b))
		var payloads []string
		if len(s.bodies) > 0 {
			payloads, s.bodies = s.bodies[0], s.bodies[1:]
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range payloads {
			fmt.Fprintf(w, "data: %s\n\n", p)
		}
		if api == APIChat {
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return New(Config{APIKey: "sk-test", BaseURL: srv.URL, Model: "m", API: api}, nil), s
}

func (s *service) request(i int) gjson.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return gjson.Parse(s.sent[i])
}

// seen is what handlers were handed.
type seen struct {
	text, refusal, reasoning strings.Builder
	messages                 []AssistantMessage
	done                     []Reasoning
}

func (s *seen) handlers() Handlers {
	return Handlers{
		Text:          func(d string) { s.text.WriteString(d) },
		Refusal:       func(d string) { s.refusal.WriteString(d) },
		Reasoning:     func(d string) { s.reasoning.WriteString(d) },
		Message:       func(m AssistantMessage) { s.messages = append(s.messages, m) },
		ReasoningDone: func(r Reasoning) { s.done = append(s.done, r) },
	}
}

func ask(t *testing.T, c *Client, h Handlers, in ...Item) (*Response, error) {
	t.Helper()
	if len(in) == 0 {
		in = []Item{{Role: "user", Text: "hi"}}
	}
	return c.Stream(context.Background(), Request{Input: in}, h)
}

func chunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, delta, f)
}

const completed = `{"type":"response.completed","response":{"id":"r","status":"completed","output":[],"usage":{"input_tokens":3,"output_tokens":4}}}`

// Refusals (issue 23, 1): a refusal streamed on either API is handed over
// as a refusal, ends up in the response's message, and the response says
// the model refused; one sent whole (only in the item's done event) too.
func TestRefusalsAreShownNotDropped(t *testing.T) {
	for name, c := range map[string]struct {
		api    string
		events []string
	}{
		"responses": {APIResponses, []string{
			`{"type":"response.output_item.added","item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"response.refusal.delta","item_id":"msg_1","delta":"I can't "}`,
			`{"type":"response.refusal.delta","item_id":"msg_1","delta":"help."}`,
			`{"type":"response.refusal.done","item_id":"msg_1","refusal":"I can't help."}`,
			`{"type":"response.output_item.done","item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help."}]}}`,
			completed}},
		"responses, whole": {APIResponses, []string{
			`{"type":"response.output_item.done","item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help."}]}}`,
			completed}},
		"chat": {APIChat, []string{
			chunk(`{"role":"assistant","content":null,"refusal":"I can't "}`, ""),
			chunk(`{"refusal":"help."}`, ""),
			chunk(`{}`, "stop")}},
	} {
		t.Run(name, func(t *testing.T) {
			cl, _ := newService(t, c.api, c.events)
			var s seen
			resp, err := ask(t, cl, s.handlers())
			if err != nil {
				t.Fatal(err)
			}
			if s.refusal.String() != "I can't help." || s.text.String() != "" || !resp.Refused() || resp.Text != "" ||
				!reflect.DeepEqual(resp.Messages, []AssistantMessage{{Refusal: "I can't help."}}) || len(s.messages) != 1 {
				t.Fatalf("refusal %q text %q, response %+v, messages told %+v", s.refusal.String(), s.text.String(), resp, s.messages)
			}
		})
	}
}

// Refusals (issue 23, 1): the conversation tells the model it refused, in
// each API's own shape.
func TestRefusalsGoBackAsRefusals(t *testing.T) {
	in := []Item{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "I can't help.", Refusal: true}, {Role: "user", Text: "why?"}}
	rc, rs := newService(t, APIResponses, []string{`{"type":"response.output_text.delta","delta":"ok"}`, completed})
	if _, err := ask(t, rc, Handlers{}, in...); err != nil {
		t.Fatal(err)
	}
	if m := rs.request(0).Get("input.1"); m.Get("role").Str != "assistant" || m.Get("type").Str != "message" ||
		m.Get("content.0.type").Str != "refusal" || m.Get("content.0.refusal").Str != "I can't help." || m.Get("status").Str != "completed" {
		t.Errorf("Responses input: %s", m.Raw)
	}
	cc, cs := newService(t, APIChat, []string{chunk(`{"content":"ok"}`, "stop")})
	if _, err := ask(t, cc, Handlers{}, in...); err != nil {
		t.Fatal(err)
	}
	if m := cs.request(0).Get("messages.1"); m.Get("role").Str != "assistant" || m.Get("refusal").Str != "I can't help." || m.Get("content").Exists() {
		t.Errorf("Chat message: %s", m.Raw)
	}
}

// DeepSeek's thinking mode (issue 23, 2): reasoning streamed as
// reasoning_content goes back on the assistant message with the calls it
// led to, as DeepSeek's documented examples send it; a tool-call message
// of the same request without reasoning of its own carries the field
// empty; reasoning in other fields is not sent; a service that refused
// reasoning parameters gets none.
func TestReasoningContentGoesBackOnItsToolCallMessage(t *testing.T) {
	thought := &Reasoning{Text: "I need the date first.", Field: "reasoning_content"}
	in := []Item{{Role: "user", Text: "weather tomorrow?"},
		{Kind: ReasoningItem, Reasoning: thought},
		{Kind: FunctionCall, CallID: "call_1", Name: "get_date", Arguments: "{}"},
		{Kind: FunctionOutput, CallID: "call_1", Output: "2026-06-13"},
		{Kind: ReasoningItem, Reasoning: &Reasoning{Text: "not DeepSeek's", Field: "reasoning"}},
		{Kind: FunctionCall, CallID: "call_2", Name: "get_weather", Arguments: `{"date":"2026-06-13"}`},
		{Kind: FunctionOutput, CallID: "call_2", Output: "rain"}}
	cl, s := newService(t, APIChat, []string{chunk(`{"content":"Bring an umbrella."}`, "stop")})
	if _, err := ask(t, cl, Handlers{}, in...); err != nil {
		t.Fatal(err)
	}
	msgs := s.request(0).Get("messages").Array()
	if len(msgs) != 5 || msgs[1].Get("reasoning_content").Str != thought.Text || msgs[1].Get("tool_calls.0.id").Str != "call_1" {
		t.Fatalf("messages %v", msgs)
	}
	if r := msgs[3].Get("reasoning_content"); !r.Exists() || r.Str != "" || msgs[3].Get("tool_calls.0.id").Str != "call_2" {
		t.Errorf("the second tool-call message: %s", msgs[3].Raw)
	}

	off := &Client{cfg: cl.cfg, api: cl.api, noReasoning: true}
	if _, err := ask(t, off, Handlers{}, in[:4]...); err == nil {
		t.Fatal("no second answer was scripted; want the request made anyway")
	}
	if strings.Contains(s.request(1).Raw, "reasoning_content") {
		t.Errorf("a service without reasoning got reasoning_content: %s", s.request(1).Raw)
	}
}

// Reasoning fields (issue 23, 2): every field services stream reasoning in
// is shown, once; DeepSeek's is kept for the message it led to.
func TestReasoningIsReadInEveryFieldServicesUse(t *testing.T) {
	for _, c := range []struct {
		name, delta, field string
	}{
		{"reasoning_content (DeepSeek, vLLM, llama.cpp, Qwen, xAI)", `{"reasoning_content":"think"}`, "reasoning_content"},
		{"reasoning (Ollama, Groq, LM Studio, vLLM)", `{"reasoning":"think"}`, "reasoning"},
		{"thinking", `{"thinking":"think"}`, "thinking"},
		{"reasoning_details alone", `{"reasoning_details":[{"type":"reasoning.text","text":"think"},{"type":"reasoning.encrypted","data":"e30="}]}`, "reasoning_details"},
		{"reasoning and reasoning_details, the same text (OpenRouter)", `{"reasoning":"think","reasoning_details":[{"type":"reasoning.text","text":"think"}]}`, "reasoning"},
		{"thinking parts of the content (Mistral)", `{"content":[{"type":"thinking","thinking":[{"type":"text","text":"think"}]}]}`, "thinking"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, _ := newService(t, APIChat, []string{chunk(c.delta, ""), chunk(`{"content":"answer"}`, ""), chunk(`{}`, "stop")})
			var s seen
			resp, err := ask(t, cl, s.handlers())
			if err != nil {
				t.Fatal(err)
			}
			want := []Reasoning{{Text: "think", Field: c.field}}
			if s.reasoning.String() != "think" || s.text.String() != "answer" || !reflect.DeepEqual(s.done, want) || !reflect.DeepEqual(resp.Reasoning, want) {
				t.Fatalf("reasoning %q text %q done %+v", s.reasoning.String(), s.text.String(), s.done)
			}
		})
	}
}

// response.incomplete (issue 23, 3): the failure names the reason as the
// Chat path does, and the usage of the event is reported.
func TestAnIncompleteAnswerNamesItsReasonAndItsUsage(t *testing.T) {
	for reason, want := range map[string]string{
		"max_output_tokens": "stopped the answer at its output limit (max_output_tokens)",
		"content_filter":    "stopped the answer with its content filter (content_filter)",
		"steered":           "could not finish the answer (incomplete: steered)",
		"":                  "could not finish the answer (incomplete, no reason given)",
	} {
		details := "null"
		if reason != "" {
			details = fmt.Sprintf(`{"reason":%q}`, reason)
		}
		cl, _ := newService(t, APIResponses, []string{`{"type":"response.output_text.delta","delta":"Half"}`,
			`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":` + details + `,"output":[],"usage":{"input_tokens":70,"output_tokens":16}}}`})
		resp, err := ask(t, cl, Handlers{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was retried") {
			t.Errorf("%q: error %v", reason, err)
		}
		if resp.Usage != (Usage{InputTokens: 70, OutputTokens: 16}) || resp.Text != "Half" {
			t.Errorf("%q: response %+v", reason, resp)
		}
	}
}

// response.reasoning_text.delta (issue 23, 4): an open Responses server's
// reasoning is shown as it streams, once, and kept with its item; a
// reasoning summary that never streamed is shown when its item ends.
func TestReasoningTextIsShown(t *testing.T) {
	cl, _ := newService(t, APIResponses, []string{
		`{"type":"response.output_item.added","item":{"id":"rs_1","type":"reasoning","summary":[],"content":[]}}`,
		`{"type":"response.reasoning_text.delta","item_id":"rs_1","delta":"Let me "}`,
		`{"type":"response.reasoning_text.delta","item_id":"rs_1","delta":"think."}`,
		`{"type":"response.reasoning_text.done","item_id":"rs_1","text":"Let me think."}`,
		`{"type":"response.output_item.done","item":{"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Let me think."}]}}`,
		`{"type":"response.output_item.done","item":{"id":"rs_2","type":"reasoning","summary":[{"type":"summary_text","text":"Then act."}]}}`,
		`{"type":"response.output_text.delta","delta":"Done."}`,
		completed})
	var s seen
	resp, err := ask(t, cl, s.handlers())
	if err != nil {
		t.Fatal(err)
	}
	want := []Reasoning{{ID: "rs_1", Text: "Let me think."}, {ID: "rs_2", Summary: []string{"Then act."}}}
	if s.reasoning.String() != "Let me think.Then act." || !reflect.DeepEqual(resp.Reasoning, want) || resp.Text != "Done." {
		t.Fatalf("reasoning shown %q, items %+v, text %q", s.reasoning.String(), resp.Reasoning, resp.Text)
	}
}

// Text sent whole (issue 23, 5): text that arrives only in an item's done
// event, or only in response.completed's output, is shown, once; an answer
// with nothing in it fails loudly.
func TestTextSentOnlyWholeIsShownAndABlankAnswerFails(t *testing.T) {
	done := `{"type":"response.output_item.done","item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"fixture hello"}]}}`
	for _, c := range []struct {
		name   string
		events []string
		text   string
		calls  int
		err    string
	}{
		{"only in the item's done event", []string{done, `{"type":"response.completed","response":{"id":"r","output":[]}}`}, "fixture hello", 0, ""},
		{"streamed and in the done event", []string{`{"type":"response.output_text.delta","delta":"fixture hello"}`, done, completed}, "fixture hello", 0, ""},
		{"only in response.completed", []string{`{"type":"response.completed","response":{"id":"r","output":[` +
			`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"fixture hello"}]},` +
			`{"id":"fc_1","type":"function_call","call_id":"call_1","name":"ls","arguments":"{}"}]}}`}, "fixture hello", 1, ""},
		{"nothing", []string{completed}, "", 0, "ended the answer with nothing in it (no text, no tool call, no refusal in response.completed)"},
		{"only reasoning", []string{`{"type":"response.output_item.done","item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"hmm"}]}}`, completed},
			"", 0, "ended the answer with nothing in it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, _ := newService(t, APIResponses, c.events)
			var s seen
			resp, err := ask(t, cl, s.handlers())
			if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			if s.text.String() != c.text || resp.Text != c.text || len(resp.Calls) != c.calls {
				t.Fatalf("shown %q, response %+v", s.text.String(), resp)
			}
		})
	}
	cl, _ := newService(t, APIChat, []string{chunk(`{"role":"assistant","content":""}`, ""), chunk(`{}`, "stop")})
	if _, err := ask(t, cl, Handlers{}); err == nil || !strings.Contains(err.Error(), "nothing in it (no text, no tool call, no refusal, finish_reason stop)") {
		t.Errorf("a blank Chat answer: %v", err)
	}
}

// Two messages (issue 23, 6): each message of an answer is told apart with
// its phase, the answer's text sets them apart by a blank line, and each
// goes back with its phase.
func TestTwoMessagesOfOneAnswerStayApartWithTheirPhases(t *testing.T) {
	msg := func(id, phase, text string) []string {
		return []string{
			`{"type":"response.output_item.added","item":{"id":"` + id + `","type":"message","role":"assistant","content":[],"phase":"` + phase + `"}}`,
			`{"type":"response.output_text.delta","item_id":"` + id + `","delta":"` + text + `"}`,
			`{"type":"response.output_item.done","item":{"id":"` + id + `","type":"message","role":"assistant","phase":"` + phase + `","content":[{"type":"output_text","text":"` + text + `"}]}}`,
		}
	}
	events := append(append(msg("msg_1", "commentary", "Got it"), msg("msg_2", "final_answer", "Here are the files.")...), completed)
	cl, s := newService(t, APIResponses, events, []string{`{"type":"response.output_text.delta","delta":"ok"}`, completed})
	var seen seen
	resp, err := ask(t, cl, seen.handlers())
	if err != nil {
		t.Fatal(err)
	}
	want := []AssistantMessage{{Text: "Got it", Phase: "commentary"}, {Text: "Here are the files.", Phase: "final_answer"}}
	if !reflect.DeepEqual(seen.messages, want) || !reflect.DeepEqual(resp.Messages, want) || resp.Text != "Got it\n\nHere are the files." {
		t.Fatalf("messages %+v, response %+v", seen.messages, resp)
	}
	in := []Item{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "Got it", Phase: "commentary"},
		{Role: "assistant", Text: "Here are the files.", Phase: "final_answer"}, {Role: "user", Text: "thanks"}}
	if _, err := ask(t, cl, Handlers{}, in...); err != nil {
		t.Fatal(err)
	}
	got := s.request(1).Get("input").Array()
	if got[1].Get("phase").Str != "commentary" || got[2].Get("phase").Str != "final_answer" || got[0].Get("phase").Exists() {
		t.Errorf("input %v", got)
	}
}

// Parallel calls on Chat Completions (issue 23, 8): calls of one answer,
// with their outputs after them, go back as one assistant message.
func TestParallelCallsGoBackAsOneAssistantMessage(t *testing.T) {
	cl, s := newService(t, APIChat, []string{chunk(`{"content":"Both sunny."}`, "stop")})
	in := []Item{{Role: "user", Text: "Paris and Tokyo?"},
		{Role: "assistant", Text: "Checking both."},
		{Kind: FunctionCall, CallID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		{Kind: FunctionCall, CallID: "call_b", Name: "get_weather", Arguments: `{"city":"Tokyo"}`},
		{Kind: FunctionOutput, CallID: "call_a", Output: "sunny"},
		{Kind: FunctionOutput, CallID: "call_b", Output: "sunny"}}
	if _, err := ask(t, cl, Handlers{}, in...); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range s.request(0).Get("messages").Array() {
		roles = append(roles, m.Get("role").Str)
	}
	m := s.request(0).Get("messages.1")
	var calls []string
	for _, c := range m.Get("tool_calls").Array() {
		calls = append(calls, c.Get("id").Str)
	}
	if strings.Join(roles, " ") != "user assistant tool tool" || m.Get("content").Str != "Checking both." || strings.Join(calls, " ") != "call_a call_b" {
		b, _ := json.Marshal(s.request(0).Get("messages").Value())
		t.Fatalf("messages %s", b)
	}
}

// TestCallArgumentsThatAreNotAnObjectGoBackAsOne: a call whose arguments
// are not a JSON object goes back as {} in both APIs (servers that parse
// every call of the conversation refuse the whole request otherwise); a
// JSON object goes back byte for byte.
func TestCallArgumentsThatAreNotAnObjectGoBackAsOne(t *testing.T) {
	sent := map[string]string{
		`{"path":"internal/st`: `{}`, `{"a":1} trailing`: `{}`, `[1,2]`: `{}`, `"a.go"`: `{}`, ``: `{}`,
		`{ "path": "a.go" }`: `{ "path": "a.go" }`,
	}
	for args, want := range sent {
		in := []Item{{Role: "user", Text: "read it"},
			{Kind: FunctionCall, CallID: "call_a", Name: "read_file", Arguments: args},
			{Kind: FunctionOutput, CallID: "call_a", Output: "not run: the arguments are not valid JSON"}}
		cl, s := newService(t, APIChat, []string{chunk(`{"content":"ok"}`, "stop")})
		if _, err := ask(t, cl, Handlers{}, in...); err != nil {
			t.Fatal(err)
		}
		if got := s.request(0).Get("messages.1.tool_calls.0.function.arguments").Str; got != want {
			t.Errorf("chat: %q went back as %q, want %q", args, got, want)
		}
		cl, s = newService(t, APIResponses, []string{
			`{"type":"response.output_text.delta","delta":"ok"}`,
			`{"type":"response.completed","response":{"output":[],"usage":{"input_tokens":1,"output_tokens":1}}}`})
		if _, err := ask(t, cl, Handlers{}, in...); err != nil {
			t.Fatal(err)
		}
		if got := s.request(0).Get(`input.#(type=="function_call").arguments`).Str; got != want {
			t.Errorf("responses: %q went back as %q, want %q", args, got, want)
		}
	}
}

// TestNoFinishReasonFinishesOnlyWholeCallsBeforeDone: a Chat stream with no
// finish_reason that the server ended with [DONE] finished its calls when
// each is whole; text alone, or a call whose arguments were cut, is still
// an unfinished answer (nothing runs).
func TestNoFinishReasonFinishesOnlyWholeCallsBeforeDone(t *testing.T) {
	call := func(args string) string {
		return chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":`+strconv.Quote(args)+`}}]}`, "")
	}
	cases := []struct {
		name   string
		chunks []string
		ok     bool
	}{
		{"whole call", []string{call(`{"path":"a.go"}`)}, true},
		{"call without arguments", []string{call(``)}, true},
		{"cut call", []string{call(`{"path":"a.`)}, false},
		{"text alone", []string{chunk(`{"content":"The first half"}`, "")}, false},
	}
	for _, c := range cases {
		cl, _ := newService(t, APIChat, c.chunks)
		resp, err := ask(t, cl, Handlers{}, Item{Role: "user", Text: "hi"})
		if c.ok != (err == nil) {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.ok && len(resp.Calls) != 1 {
			t.Errorf("%s: calls %+v", c.name, resp.Calls)
		}
		if !c.ok && err != nil && !strings.Contains(err.Error(), "no finish_reason") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
