package modeltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Reply scripts the answer to one request.
//
// The zero Reply streams a successful response with no output items. Text and
// Calls are streamed in that order: one assistant message carrying the Text
// deltas (if any), then one function_call item per Call.
type Reply struct {
	// Reasoning items are streamed first, each with its summary parts as
	// reasoning summary deltas. Their encrypted content is sent only when
	// the request includes "reasoning.encrypted_content", as the API does.
	// (Chat Completions streams the summaries as reasoning_content.)
	Reasoning []Reasoning
	// Text holds the assistant text deltas of one message; empty means no
	// message item.
	Text []string
	// Refusal holds the deltas of the model's refusal to answer, streamed
	// as a message of its own after Text's (response.refusal.delta; Chat
	// Completions' delta.refusal).
	Refusal []string
	// Calls are function calls, streamed after the message.
	Calls []Call
	// Usage is reported in the terminal response; zero fields get an estimate.
	Usage Usage

	// HTTPStatus, if non-zero and not 200, answers with that status and an
	// OpenAI-style JSON error body instead of a stream.
	HTTPStatus int
	// ErrorMessage is the message of an HTTPStatus error (a stock message
	// for the status if empty); ErrorParam and ErrorCode are its param and
	// code.
	ErrorMessage string
	ErrorParam   string
	ErrorCode    string
	// RetryAfter, if positive, is sent with an HTTPStatus error as
	// Retry-After-Ms and as Retry-After in whole seconds (rounded up), the
	// two headers the OpenAI API and the openai-go client use.
	RetryAfter time.Duration
	// ErrorBody, if set, is the body of an HTTPStatus error instead of the
	// OpenAI-style JSON error (a proxy's HTML page, say), sent with
	// ErrorContentType ("text/plain; charset=utf-8" if empty).
	ErrorBody        string
	ErrorContentType string

	// Recorded, if set, is a whole HTTP response as a real service sent it
	// (status line, headers, body; a file of agent/model/testdata), sent
	// as it is instead of a scripted answer, its body in pieces of Piece
	// bytes, each flushed (the whole body at once when Piece is 0).
	Recorded []byte
	Piece    int

	// DropAfter, if positive, abruptly closes the connection after that many
	// events have been sent (a mid-stream drop, no terminating chunk).
	DropAfter int
	// NoCompleted sends everything except the terminal event, then ends the
	// body normally.
	NoCompleted bool
	// Delay is slept between events. The sleep ends early if the client goes
	// away or the server closes.
	Delay time.Duration
	// Hold, if set, blocks the stream after the first text delta (or after
	// the first event when there is no text) until Hold is closed, the client
	// disconnects or the server closes.
	Hold <-chan struct{}
	// Failed, if set, ends the stream with response.failed carrying this
	// error message instead of response.completed.
	Failed string

	// Stall makes the service go silent at a point of the answer and stay
	// silent until the client gives up or the server closes (a hung
	// service, not a slow one).
	Stall Stall
	// BadJSON sends, at the Hold point, an event whose data is not JSON,
	// then goes on with the stream.
	BadJSON bool
	// LongLine, if positive, sends at the Hold point an event whose data
	// line is that many bytes long, then goes on with the stream.
	LongLine int
}

// Stall is where a stalled service stops sending.
type Stall int

const (
	// NoStall answers normally.
	NoStall Stall = iota
	// StallBeforeHeaders reads the request and never answers.
	StallBeforeHeaders
	// StallAfterHeaders sends 200 and the stream's headers, then nothing.
	StallAfterHeaders
	// StallMidStream stops at the Hold point (after the first text delta,
	// or after the first event when there is no text).
	StallMidStream
)

// Call is one scripted function call.
//
// In JSON (rule files) it is {"id": ..., "name": ..., "arguments": ...} where
// arguments may be a string holding JSON or any JSON value, which is used
// verbatim.
type Call struct {
	// ID is the call_id; a fresh "call_..." id is generated if empty.
	ID string `json:"id,omitempty"`
	// Name is the function name.
	Name string `json:"name"`
	// Arguments is the JSON-encoded argument string; "" is sent as "{}".
	Arguments string `json:"arguments,omitempty"`
}

// UnmarshalJSON accepts arguments as a JSON string or as any other JSON value.
func (c *Call) UnmarshalJSON(b []byte) error {
	var v struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("call: %w", err)
	}
	if v.Name == "" {
		return errors.New("call: name is required")
	}
	*c = Call{ID: v.ID, Name: v.Name}
	args := bytes.TrimSpace(v.Arguments)
	switch {
	case len(args) == 0 || string(args) == "null":
	case args[0] == '"':
		return json.Unmarshal(args, &c.Arguments)
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, args); err != nil {
			return fmt.Errorf("call %s: arguments: %w", v.Name, err)
		}
		c.Arguments = buf.String()
	}
	return nil
}

// Reasoning is one scripted reasoning item.
type Reasoning struct {
	// Summary holds the summary's parts (paragraphs), each streamed in
	// about two deltas.
	Summary []string `json:"summary,omitempty"`
	// Encrypted is the encrypted content; a fresh opaque value if empty.
	Encrypted string `json:"encrypted,omitempty"`
}

// Usage is the token usage reported in the terminal response.
type Usage struct {
	Input  int `json:"input,omitempty"`
	Output int `json:"output,omitempty"`
	// Cached is how many of the input tokens are reported as cached.
	Cached int `json:"cached,omitempty"`
	// None reports no usage at all (a service that counts nothing).
	None bool `json:"none,omitempty"`
}

// Request is one request received by the server.
type Request struct {
	// Raw is the request body as received.
	Raw json.RawMessage
	// Model is the requested model.
	Model string
	// Instructions is the instructions (system prompt), if a string.
	Instructions string
	// Input holds the input items; a string input becomes one user message
	// item {"type":"message","role":"user","content":<string>}.
	Input []map[string]any
	// Tools holds the tool definitions.
	Tools []map[string]any
	// Stream reports whether a streamed response was requested.
	Stream bool
	// API is "responses" or "chat" (a Chat Completions request).
	API string
	// Include, Reasoning and Store are the request's parameters of those
	// names (Responses); Reasoning holds reasoning_effort as "effort" for
	// Chat Completions.
	Include   []string
	Reasoning map[string]any
	Store     *bool
	// Messages are a Chat Completions request's messages as sent; Input
	// holds them too, as the Responses items they correspond to, so rules
	// and helpers work for both APIs.
	Messages []map[string]any
	// Authorization is the Authorization header.
	Authorization string
}

// LastUserText returns the text of the last user message in the input, or "".
func (r Request) LastUserText() string {
	for i := len(r.Input) - 1; i >= 0; i-- {
		if isUserMessage(r.Input[i]) {
			return contentText(r.Input[i]["content"])
		}
	}
	return ""
}

// FirstUserText returns the text of the first user message in the input,
// or "".
func (r Request) FirstUserText() string {
	for _, it := range r.Input {
		if isUserMessage(it) {
			return contentText(it["content"])
		}
	}
	return ""
}

// Effort is the reasoning effort the request asked for ("" for none).
func (r Request) Effort() string {
	e, _ := r.Reasoning["effort"].(string)
	return e
}

// ReasoningItems returns the reasoning items of the input, in order.
func (r Request) ReasoningItems() []map[string]any {
	var out []map[string]any
	for _, it := range r.Input {
		if it["type"] == "reasoning" {
			out = append(out, it)
		}
	}
	return out
}

// InputParts returns the content parts of every user message of the
// input, in order (a string content is one input_text part).
func (r Request) InputParts() []map[string]any {
	var out []map[string]any
	for _, it := range r.Input {
		if !isUserMessage(it) {
			continue
		}
		switch c := it["content"].(type) {
		case string:
			out = append(out, map[string]any{"type": "input_text", "text": c})
		case []any:
			for _, p := range c {
				if m, ok := p.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// Text is the request's whole input as text (instructions, messages,
// arguments and outputs), for tests that look for something anywhere.
func (r Request) Text() string {
	var b strings.Builder
	b.WriteString(r.Instructions)
	for _, it := range r.Input {
		for _, k := range []string{"content", "output", "arguments"} {
			b.WriteString("\n")
			b.WriteString(contentText(it[k]))
		}
	}
	return b.String()
}

// LastToolOutput returns the output of the last input item if that item is
// a function_call_output.
func (r Request) LastToolOutput() (string, bool) {
	outs := r.trailingToolOutputs()
	if len(outs) == 0 {
		return "", false
	}
	return outs[len(outs)-1], true
}

// trailingToolOutputs returns the outputs of the function_call_output items
// at the end of the input (several after parallel calls), in input order.
func (r Request) trailingToolOutputs() []string {
	i := len(r.Input)
	for i > 0 && r.Input[i-1]["type"] == "function_call_output" {
		i--
	}
	var outs []string
	for _, item := range r.Input[i:] {
		outs = append(outs, contentText(item["output"]))
	}
	return outs
}

func (r Request) lastIsUserMessage() bool {
	return len(r.Input) > 0 && isUserMessage(r.Input[len(r.Input)-1])
}

func isUserMessage(item map[string]any) bool {
	t, _ := item["type"].(string)
	return item["role"] == "user" && (t == "" || t == "message")
}

// contentText flattens message content or tool output: a string, or a list
// of parts whose "text" fields are concatenated.
func contentText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
				if s, ok := m["refusal"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

// requestBody is the part of a Responses create request the mock reads.
type requestBody struct {
	Model        string           `json:"model"`
	Instructions any              `json:"instructions"`
	Input        json.RawMessage  `json:"input"`
	Tools        []map[string]any `json:"tools"`
	Stream       bool             `json:"stream"`
	Include      []string         `json:"include"`
	Reasoning    map[string]any   `json:"reasoning"`
	Store        *bool            `json:"store"`
}

// parseRequest parses a request body. The returned params hold every
// top-level field, for echoing request settings in the response object.
func parseRequest(body []byte, auth string) (Request, map[string]any, *apiError) {
	req := Request{Raw: json.RawMessage(body), Authorization: auth}
	var rb requestBody
	if err := json.Unmarshal(body, &rb); err != nil {
		return req, nil, badRequest("", "We could not parse the JSON body of your request. (%v)", err)
	}
	var params map[string]any
	_ = json.Unmarshal(body, &params)
	req.Model, req.Tools, req.Stream, req.API = rb.Model, rb.Tools, rb.Stream, "responses"
	req.Include, req.Reasoning, req.Store = rb.Include, rb.Reasoning, rb.Store
	req.Instructions, _ = rb.Instructions.(string)
	in := bytes.TrimSpace(rb.Input)
	switch {
	case len(in) == 0 || string(in) == "null":
	case in[0] == '"':
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return req, params, badRequest("input", "Invalid 'input': %v", err)
		}
		req.Input = []map[string]any{{"type": "message", "role": "user", "content": s}}
	default:
		if err := json.Unmarshal(in, &req.Input); err != nil {
			return req, params, badRequest("input", "Invalid 'input': expected a string or an array of input items. (%v)", err)
		}
	}
	if req.Model == "" {
		return req, params, badRequest("model", "Missing required parameter: 'model'.")
	}
	return req, params, validateInput(req)
}

// validateInput refuses input the API refuses: a reasoning item that the
// service would have to look up (no encrypted content while store is off),
// one not followed by the item it led to, and a function_call_output
// without its function_call.
func validateInput(req Request) *apiError {
	stored := req.Store == nil || *req.Store
	calls := map[string]bool{}
	for i, it := range req.Input {
		switch it["type"] {
		case "reasoning":
			id, _ := it["id"].(string)
			if enc, _ := it["encrypted_content"].(string); enc == "" && !stored {
				return badRequest("input", "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id)
			}
			next := map[string]any{}
			if i+1 < len(req.Input) {
				next = req.Input[i+1]
			}
			if next["type"] != "function_call" && !(next["role"] == "assistant") && next["type"] != "reasoning" {
				return badRequest("input", "Item '%s' of type 'reasoning' was provided without its required following item.", id)
			}
		case "function_call":
			if id, _ := it["call_id"].(string); id != "" {
				calls[id] = true
			}
		case "function_call_output":
			if id, _ := it["call_id"].(string); !calls[id] {
				return badRequest("input", "No tool call found for function call output with call_id %s.", id)
			}
		}
	}
	return nil
}
