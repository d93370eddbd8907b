// Package model talks to a model service, through openai-go, streaming: the
// OpenAI Responses API by default, Chat Completions for the servers that
// never learned it.
//
// It never resends a request that may have reached the model (the client's
// retries are switched off). The one new request it ever makes after a
// failure follows a rejection that proves nothing ran: the service refused
// the request as a whole (HTTP 400 or 422) naming reasoning parameters it
// does not take, and the new request leaves them out (see Client.Stream).
// Every failure is turned into a message a person can act on. It never logs
// the API key.
package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/tool"
)

// Item is one entry of the conversation sent to the model.
type Item struct {
	Kind ItemKind
	// Role is "user", "assistant" or "developer" (kin's own notes) for
	// messages.
	Role string
	Text string
	// Content, when set, is a user message's parts (text and images)
	// instead of Text.
	Content   []Content
	CallID    string // function_call and function_call_output
	Name      string
	Arguments string
	Output    string
	// Reasoning is a reasoning item sent back as the service returned it.
	Reasoning *Reasoning
	// Refusal marks an assistant message whose Text is the model's refusal
	// (sent back as one, so the model knows it refused).
	Refusal bool
	// Phase is an assistant message's phase as the model labelled it
	// (commentary, final_answer); GPT-5.x codex models expect it back.
	Phase string
}

// ItemKind distinguishes messages from tool calls, their outputs and
// reasoning.
type ItemKind int

const (
	Message ItemKind = iota
	FunctionCall
	FunctionOutput
	ReasoningItem
)

// Content is one part of a user message: text, or an image (base64 data of
// a MIME type).
type Content struct {
	Text      string
	ImageMIME string
	ImageData string
}

// Reasoning is the model's reasoning before what it led to: a Responses
// reasoning item (its summary and the encrypted chain of thought that lets
// the model go on from it: kin stores nothing at the service, so it sends
// the item back on later requests), or the reasoning a Chat Completions
// server streamed beside the answer.
type Reasoning struct {
	ID        string
	Summary   []string
	Encrypted string
	// Text is the reasoning itself, where the service shows it: a Chat
	// Completions server's reasoning text, or the reasoning_text content of
	// an open Responses server's item.
	Text string
	// Field is the Chat Completions field Text came in (reasoning_content,
	// reasoning, thinking, ...), or reasoning_content for reasoning that
	// goes back as DeepSeek's does (OpenRouter's, see readChat); "" for a
	// Responses item.
	Field string
}

// CarriesOver reports whether the reasoning can go back to the model that
// made it: a Responses item with its encrypted content, or reasoning a Chat
// Completions server streamed as reasoning_content (DeepSeek's thinking
// mode refuses a conversation whose tool-call messages lack theirs).
func (r Reasoning) CarriesOver() bool {
	return r.Encrypted != "" || (r.Field == fieldReasoningContent && r.Text != "")
}

// Shown is the reasoning as a person reads it: the summary, else the text.
func (r Reasoning) Shown() string {
	if len(r.Summary) > 0 {
		return strings.Join(r.Summary, "\n\n")
	}
	return r.Text
}

// Request is one model call.
type Request struct {
	Instructions string
	Input        []Item
	Tools        []tool.Spec
	// Effort is the reasoning effort ("" leaves it to the service).
	Effort string
}

// Call is a function call the model asked for.
type Call struct {
	CallID    string
	Name      string
	Arguments string
}

// Usage counts tokens. InputTokens includes CachedInputTokens, the input
// the service read from its cache (billed lower by most).
type Usage struct {
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	CachedInputTokens int64 `json:"cachedInputTokens,omitempty"`
	// Estimated says the counts are kin's estimate: the service reported
	// none (set by kin, never by a service).
	Estimated bool `json:"estimated,omitempty"`
}

// MaxTokens bounds one request's reported count of tokens (about a
// trillion): no request comes near it, and kin adds counts up (a turn, a
// session, the day's ledger) where a sum past int64 would turn negative.
const MaxTokens = 1 << 40

// counted is a usage report as kin counts it. A report with a negative
// count is not believed: it is taken as no report, which kin estimates
// (counted as it stood, it would give tokens back and let a spend limit
// pass). A count past MaxTokens is MaxTokens, and cached input is at most
// the input.
func counted(u Usage) Usage {
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CachedInputTokens < 0 {
		return Usage{}
	}
	u.InputTokens, u.OutputTokens = min(u.InputTokens, MaxTokens), min(u.OutputTokens, MaxTokens)
	u.CachedInputTokens = min(u.CachedInputTokens, u.InputTokens)
	return u
}

// AssistantMessage is one assistant message of an answer: its text, or its refusal
// (the model declining to answer), and its phase.
type AssistantMessage struct {
	Text    string
	Refusal string
	Phase   string
}

// Response is what one streamed model call produced.
type Response struct {
	// Text is the answer as shown: every message's text, a blank line
	// between two messages.
	Text      string
	Messages  []AssistantMessage
	Calls     []Call
	Reasoning []Reasoning
	Usage     Usage
	// Accepted says the service took the request (a success status) and
	// began its answer: the request ran and is billed, whether or not the
	// answer completed or its usage was reported.
	Accepted bool
}

// Refused reports whether the model refused: a message of the answer is a
// refusal.
func (r *Response) Refused() bool {
	for _, m := range r.Messages {
		if m.Refusal != "" {
			return true
		}
	}
	return false
}

// empty reports whether the answer has nothing a person could read or kin
// could run: no text, no refusal, no call.
func (r *Response) empty() bool {
	for _, m := range r.Messages {
		if strings.TrimSpace(m.Text) != "" || m.Refusal != "" {
			return false
		}
	}
	return len(r.Calls) == 0
}

// errEmpty is the failure of an answer with nothing in it: a blank answer
// is never reported as one that completed.
func errEmpty(api string) error {
	return fmt.Errorf("the model service ended the answer with nothing in it (no text, no tool call, no refusal%s); nothing was retried", api)
}

// Handlers receive a response as it streams; nil fields are skipped.
type Handlers struct {
	// Text is a piece of the answer's text.
	Text func(string)
	// Refusal is a piece of the model's refusal to answer.
	Refusal func(string)
	// Message is an assistant message that ended: what its pieces were,
	// and its phase. Pieces after it belong to the next message.
	Message func(AssistantMessage)
	// Reasoning is a piece of the reasoning (a summary, or the reasoning
	// text a service shows).
	Reasoning func(string)
	// ReasoningDone is a finished reasoning item, handed over before the
	// items that follow it in the answer.
	ReasoningDone func(Reasoning)
	// Notice says something a person should know about the service (it
	// refused reasoning parameters, and kin goes on without them).
	Notice func(string)
}

func (h Handlers) text(s string) {
	if h.Text != nil {
		h.Text(s)
	}
}

func (h Handlers) refusal(s string) {
	if h.Refusal != nil {
		h.Refusal(s)
	}
}

func (h Handlers) message(m AssistantMessage) {
	if h.Message != nil {
		h.Message(m)
	}
}

func (h Handlers) reasoning(s string) {
	if h.Reasoning != nil {
		h.Reasoning(s)
	}
}

func (h Handlers) reasoningDone(r Reasoning) {
	if h.ReasoningDone != nil {
		h.ReasoningDone(r)
	}
}

// Client is one model's client, retries off.
type Client struct {
	cfg Config
	api streamer

	// mu guards noReasoning and why.
	mu sync.Mutex
	// noReasoning is set once the service refused reasoning parameters:
	// every later request of this client leaves them out.
	noReasoning bool
	why         string
}

// streamer is one API's way of running a request.
type streamer interface {
	stream(ctx context.Context, req Request, h Handlers, reasoning bool) (*Response, error)
}

// New builds the client of one model.
func New(c Config, httpClient *http.Client) *Client {
	hc := idleClient(httpClient, c.IdleTimeout)
	cl := &Client{cfg: c}
	if c.API == APIChat {
		cl.api = newChat(c, hc)
	} else {
		cl.api = newResponses(c, hc)
	}
	return cl
}

// Config is the model this client talks to.
func (c *Client) Config() Config { return c.cfg }

// Reasoning reports whether requests carry reasoning parameters (false once
// the service refused them), and why not.
func (c *Client) Reasoning() (bool, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.noReasoning, c.why
}

// Stream runs one model call, handing what streams to h, and returns the
// whole response once the service said it completed. A stream that ends
// without completing is an error.
//
// Requests carry reasoning parameters (include encrypted reasoning, a
// summary, the effort) and the conversation's reasoning items until the
// service refuses them. A refusal that names them (HTTP 400 or 422: the
// request was refused as a whole, so nothing ran and nothing streamed) is
// remembered for this client and followed by one new request without them;
// that request is not the first sent again but a different one, which the
// service has never seen.
func (c *Client) Stream(ctx context.Context, req Request, h Handlers) (*Response, error) {
	with, _ := c.Reasoning()
	resp, err := c.api.stream(ctx, req, h, with)
	err = c.keyless(err)
	var ref *Refusal
	if !with || !errors.As(err, &ref) || !ref.namesReasoning() {
		return resp, err
	}
	c.mu.Lock()
	first := !c.noReasoning
	c.noReasoning, c.why = true, ref.Detail
	c.mu.Unlock()
	if first && h.Notice != nil {
		h.Notice("The model service refused kin's reasoning parameters for " + c.cfg.Model + " (" + ref.Detail +
			"), so kin goes on without them: no reasoning summaries, and the model's reasoning is not carried from one request to the next.")
	}
	resp, err = c.api.stream(ctx, req, h, false)
	return resp, c.keyless(err)
}

// keyless is err without the client's API key in it. What a service
// answers is quoted in a failure (its error message, an error body or
// event, a failed response), and a service or a proxy may quote the key
// it was sent there; the failure reaches the editor, the session log and
// kin's log. A refusal keeps its type (callers read it) with the key
// masked in its message and detail.
func (c *Client) keyless(err error) error {
	key := c.cfg.APIKey
	if err == nil || len(key) < 8 || !strings.Contains(err.Error(), key) {
		return err
	}
	mask := func(s string) string { return strings.ReplaceAll(s, key, "[the API key]") }
	var ref *Refusal
	if errors.As(err, &ref) {
		r := *ref
		r.Detail, r.msg = mask(r.Detail), mask(err.Error())
		return &r
	}
	return errors.New(mask(err.Error()))
}
