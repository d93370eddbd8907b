package model

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"
)

// chatAPI speaks Chat Completions, for the servers that never learned the
// Responses API. Reasoning does not carry over there (the API has no
// encrypted reasoning); the effort is sent as reasoning_effort, and the
// reasoning text some servers stream (reasoning_content, reasoning) is shown
// as the reasoning summary.
type chatAPI struct {
	svc   openai.ChatCompletionService
	model string
	// cacheKey: the service takes prompt_cache_key (takesPromptCacheKey).
	cacheKey bool
	// extras are what this service streamed with its calls and wants
	// back: their extra_content, their answer's reasoning_details.
	extras *callExtras
}

func newChat(c Config, hc *http.Client) *chatAPI {
	return &chatAPI{svc: openai.NewChatCompletionService(requestOptions(c, hc)...), model: c.Model, cacheKey: takesPromptCacheKey(c.BaseURL),
		extras: &callExtras{}}
}

func (a *chatAPI) stream(ctx context.Context, req Request, h Handlers, reasoning bool) (*Response, error) {
	params := openai.ChatCompletionNewParams{
		Model:         a.model,
		Messages:      chatMessages(req, reasoning, a.extras),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if reasoning && req.Effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.Effort)
	}
	if len(req.Tools) > 0 || req.Instructions != "" {
		tools := toolsFor(req.Tools)
		params.Tools = tools.chat
		if a.cacheKey {
			params.PromptCacheKey = param.NewOpt(promptCacheKey(req.Instructions, tools))
		}
	}
	var failure httpFailure
	// The request NewStreaming makes, with its body handed to openai-go's
	// SSE decoder through sseDecoder.
	var raw *http.Response
	_, err := a.svc.New(ctx, params, option.WithMiddleware(failure.capture),
		option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	dec := sseDecoder(raw)
	stream := ssestream.NewStream[openai.ChatCompletionChunk](dec, err)
	defer stream.Close()
	ans := newAnswer(h)
	ans.out.Accepted = failure.accepted()
	finish, err := readChat(stream, ans, a.extras)
	if err != nil {
		return ans.response(), explain(ctx, err, failure)
	}
	if finish == "" && endedWithDone(dec) && callsWhole(ans.out.Calls) {
		// Kimi K2.5 through OpenRouter ends its tool calls with no
		// finish_reason at all, then its usage and [DONE]
		// (OpenRouterTeam/ai-sdk-provider issue 420): a stream the server
		// closed with [DONE], whose every call is whole, finished with its
		// calls. A stream cut by a closed connection still has no finish,
		// and neither has an answer of text alone.
		finish = "tool_calls"
	}
	switch finish {
	case "":
		return ans.response(), failure.unfinished("finishing it (no finish_reason)", ans.heard)
	case "length":
		return ans.response(), errors.New("the model service stopped the answer at its length limit (finish_reason length); nothing was retried")
	case "content_filter":
		return ans.response(), errors.New("the model service withheld the answer (finish_reason content_filter)")
	case "error":
		return ans.response(), errors.New("the model service reported an error mid-answer (finish_reason error); nothing was retried")
	}
	resp := ans.response()
	if resp.empty() {
		return resp, errEmpty(", finish_reason " + finish)
	}
	return resp, nil
}

// readChat reads a Chat Completions stream into the answer, and returns its
// finish_reason. Reasoning comes in whichever field the server uses (see
// chatReasoning), or as thinking parts of the content (Mistral); a call's
// arguments come in pieces, numbered by index (a server that numbers every
// call 0 names each with its own id); usage comes in a chunk of its own,
// with the last choice, or in x_groq (Groq). A call's extra_content, and
// the answer's reasoning_details (with its first call), go to extras.
func readChat(stream *ssestream.Stream[openai.ChatCompletionChunk], ans *answer, extras *callExtras) (string, error) {
	// A call's arguments come in pieces, like the text: built linearly
	// (a write_file's content would otherwise be copied on every delta).
	type pending struct {
		call  Call
		args  strings.Builder
		extra json.RawMessage
	}
	var calls []*pending
	byIndex := map[int64]*pending{}
	var details reasoningDetails
	// field is the reasoning field of the reasoning being streamed ("":
	// none is).
	field := ""
	// routed: the stream is OpenRouter's: its chunks carry a generation id
	// ("gen-...") and name the provider that answered ("provider":
	// "DeepSeek"). A provider name alone is not enough: gateways such as
	// Bifrost add one to every chunk of the services they front, Groq
	// among them, which refuses a reasoning_content sent back
	// (janhq/jan issue 8136).
	routed := false
	endReasoning := func() {
		if field == "" {
			return
		}
		// OpenRouter streams DeepSeek's thinking as reasoning, with no
		// reasoning_details to send back (labring/FastGPT issue 3892),
		// and DeepSeek V4, through OpenRouter too, refuses the request
		// after a tool call unless that reasoning comes back as
		// reasoning_content ("The `reasoning_content` in the thinking mode
		// must be passed back to the API": danny-avila/LibreChat issue
		// 13366, UKGovernmentBEIS/inspect_ai issue 4079): every turn with
		// a call failed at its second request. Such reasoning goes back
		// as DeepSeek's own does. Reasoning that came with
		// reasoning_details goes back as those (reasoningDetails).
		f := field
		if f == "reasoning" && routed && len(details.entries) == 0 {
			f = fieldReasoningContent
		}
		ans.endReasoning(Reasoning{Field: f})
		field = ""
	}
	finish := ""
	for stream.Next() {
		ans.heard = true
		chunk := stream.Current()
		if f, ok := chunk.JSON.ExtraFields["provider"]; ok && gjson.Parse(f.Raw()).Type == gjson.String && strings.HasPrefix(chunk.ID, "gen-") {
			routed = true
		}
		if u, ok := chatUsage(chunk); ok {
			ans.out.Usage = u
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		ch := chunk.Choices[0]
		d := ch.Delta
		if f, ok := d.JSON.ExtraFields["reasoning_details"]; ok {
			details.add(f.Raw())
		}
		if s, f := chatReasoning(d.JSON.ExtraFields); s != "" {
			ans.addReasoning(s, true)
			field = f
		}
		for _, p := range chatContent(d) {
			if p.thinking {
				ans.addReasoning(p.text, true)
				field = "thinking"
				continue
			}
			if p.text != "" {
				endReasoning()
			}
			ans.addText(p.text)
		}
		if d.Refusal != "" {
			endReasoning()
			ans.addRefusal(d.Refusal)
		}
		for _, tc := range chatToolCalls(d) {
			endReasoning()
			c := byIndex[tc.Index]
			// Another id at an index names another call when it comes with
			// its function's name, as a call's first piece does (vLLM and
			// Grok number parallel calls 0 each). Without one it is a piece
			// of the call being streamed: Poolside sends every piece after
			// the first under an id of its own (poolsideai/pool issue 9),
			// and the call keeps its first. Some gateways number every call
			// 0 and name none (vercel/ai issue 18440): there a function's
			// name arriving after a call already named and whole starts the
			// next call. The same call goes on under its own id again, with
			// a name before its arguments are whole, and with its own name
			// and no arguments (TGI and llama.cpp before its pull request
			// 13800 repeat the name on every piece).
			if c == nil || (tc.Function.Name != "" && (otherCall(tc.ID, c.call.CallID) ||
				(!sameID(tc.ID, c.call.CallID) && c.call.Name != "" && wholeObject(c.args.String()) &&
					(tc.Function.Name != c.call.Name || tc.Function.Arguments != "")))) {
				c = &pending{}
				byIndex[tc.Index] = c
				calls = append(calls, c)
			}
			if c.call.CallID == "" {
				c.call.CallID = tc.ID
			}
			if tc.Function.Name != "" {
				c.call.Name = tc.Function.Name
			}
			c.args.WriteString(tc.Function.Arguments)
			if f, ok := tc.JSON.ExtraFields["extra_content"]; ok && gjson.Parse(f.Raw()).IsObject() {
				c.extra = json.RawMessage(strings.Clone(f.Raw()))
			}
		}
		if ch.FinishReason != "" {
			finish = ch.FinishReason
		}
	}
	endReasoning()
	answerDetails := details.sent()
	for i, p := range calls {
		c := p.call
		c.Arguments = p.args.String()
		if c.CallID == "" {
			c.CallID = newCallID() // some servers number calls without naming them
		}
		e := callExtra{content: p.extra}
		if i == 0 {
			e.details = answerDetails // the answer's, once: on its assistant message
		}
		extras.put(c.CallID, e)
		ans.addCall(c, "")
	}
	ans.flushMessage(true)
	return finish, stream.Err()
}

// otherCall reports whether a piece's id names a call other than the one
// with id callID: both have ids, and they differ.
func otherCall(id, callID string) bool {
	return id != "" && callID != "" && id != callID
}

// sameID reports whether a piece carries the id of the call with id callID.
func sameID(id, callID string) bool {
	return id != "" && id == callID
}

// wholeObject reports whether a call's arguments so far are one JSON
// object: all of them, as far as a reader can tell. It runs on each piece
// of a call from a server that names the function on every piece (TGI):
// only arguments that end as an object does are read through, or a long
// call's pieces would each be read from its start.
func wholeObject(args string) bool {
	return strings.HasSuffix(strings.TrimRight(args, " \t\r\n"), "}") && sentArguments(args) == args
}

// chatToolCalls is a delta's tool calls: its list, or the one call
// text-generation-inference (before 3.2) sends as an object in its place
// (huggingface/text-generation-inference pull requests 2949 and 3086:
// "ToolCalls in streaming case should be a list of tool calls, TGI outputs
// singular tool call"), which openai-go, expecting a list, drops: every
// call was lost and the answer ended "with nothing in it".
func chatToolCalls(d openai.ChatCompletionChunkChoiceDelta) []openai.ChatCompletionChunkChoiceDeltaToolCall {
	if len(d.ToolCalls) > 0 {
		return d.ToolCalls
	}
	raw := d.JSON.ToolCalls.Raw()
	if !gjson.Parse(raw).IsObject() {
		return nil
	}
	var one openai.ChatCompletionChunkChoiceDeltaToolCall
	if json.Unmarshal([]byte(raw), &one) != nil {
		return nil
	}
	return []openai.ChatCompletionChunkChoiceDeltaToolCall{one}
}

// callsWhole reports whether there are calls, each with arguments that are
// one JSON object (or none at all).
func callsWhole(calls []Call) bool {
	for _, c := range calls {
		if c.Arguments != "" && sentArguments(c.Arguments) != c.Arguments {
			return false
		}
	}
	return len(calls) > 0
}

// fieldReasoningContent is the field DeepSeek (and vLLM, llama.cpp, Qwen,
// xAI) stream reasoning in, and the one DeepSeek's thinking mode wants back.
const fieldReasoningContent = "reasoning_content"

// reasoningFields are the fields servers stream reasoning in beside the
// answer, in the order kin reads them: reasoning_content (DeepSeek, vLLM
// before 0.10, llama.cpp, Qwen, xAI), reasoning (Ollama, Groq, OpenRouter,
// LM Studio, vLLM), thinking. A server that sends two says the same twice
// (OpenRouter sends reasoning and reasoning_details): the first is shown.
var reasoningFields = []string{fieldReasoningContent, "reasoning", "thinking"}

// chatReasoning is the reasoning text a delta carries, and its field.
func chatReasoning(extra map[string]respjson.Field) (string, string) {
	for _, k := range reasoningFields {
		if f, ok := extra[k]; ok {
			if s := gjson.Parse(f.Raw()); s.Type == gjson.String && s.Str != "" {
				return s.Str, k
			}
		}
	}
	// OpenRouter's reasoning_details: text and summary parts (encrypted
	// ones are nothing a person could read).
	if f, ok := extra["reasoning_details"]; ok {
		var b strings.Builder
		for _, d := range gjson.Parse(f.Raw()).Array() {
			b.WriteString(d.Get("text").String())
			b.WriteString(d.Get("summary").String())
		}
		if b.Len() > 0 {
			return b.String(), "reasoning_details"
		}
	}
	return "", ""
}

// contentPart is a piece of a delta's content: text, or thinking.
type contentPart struct {
	text     string
	thinking bool
}

// chatContent is a delta's content: a string, or (Mistral's reasoning
// models) a list of text and thinking parts, a thinking part holding text
// parts of its own.
func chatContent(d openai.ChatCompletionChunkChoiceDelta) []contentPart {
	raw := gjson.Parse(d.JSON.Content.Raw())
	if !raw.IsArray() {
		if d.Content == "" {
			return nil
		}
		return []contentPart{{text: d.Content}}
	}
	var out []contentPart
	for _, p := range raw.Array() {
		switch p.Get("type").Str {
		case "text":
			out = append(out, contentPart{text: p.Get("text").Str})
		case "thinking":
			for _, t := range p.Get("thinking").Array() {
				out = append(out, contentPart{text: t.Get("text").Str, thinking: true})
			}
		}
	}
	return out
}

// chatUsage is a chunk's usage: its usage field, or Groq's x_groq.usage.
func chatUsage(c openai.ChatCompletionChunk) (Usage, bool) {
	if c.JSON.Usage.Valid() {
		return counted(Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens,
			CachedInputTokens: c.Usage.PromptTokensDetails.CachedTokens}), true
	}
	if f, ok := c.JSON.ExtraFields["x_groq"]; ok {
		if u := gjson.Parse(f.Raw()).Get("usage"); u.IsObject() {
			return counted(Usage{InputTokens: u.Get("prompt_tokens").Int(), OutputTokens: u.Get("completion_tokens").Int()}), true
		}
	}
	return Usage{}, false
}

// chatMessages is the conversation as Chat Completions messages. kin's
// notes (developer messages) go as user messages: many chat templates of
// local servers refuse a system message after the first. The calls of one
// answer join its assistant message, as the model produced them; a refusal
// goes back as the assistant's refusal; reasoning streamed as
// reasoning_content goes back on the assistant message it led to (DeepSeek's
// thinking mode refuses a tool-call message without it), and once any does,
// every assistant message carries the field. A call the service
// hung extra_content on (extras) carries it back, and the assistant message
// of an answer whose reasoning_details OpenRouter streamed carries them.
func chatMessages(req Request, reasoning bool, extras *callExtras) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Input)+1)
	if req.Instructions != "" {
		out = append(out, openai.SystemMessage(req.Instructions))
	}
	// lastAssistant is the assistant message tool calls join, while no
	// other message came between; thought is reasoning_content for the
	// next assistant message.
	var lastAssistant *openai.ChatCompletionAssistantMessageParam
	var thought *string
	carried := false
	assistant := func(m *openai.ChatCompletionAssistantMessageParam) {
		lastAssistant = m
		if thought != nil {
			addExtraField(m, fieldReasoningContent, *thought)
			thought, carried = nil, true
		}
	}
	for _, it := range req.Input {
		switch it.Kind {
		case Message:
			lastAssistant = nil
			switch {
			case it.Role == "assistant" && it.Refusal:
				m := openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{Refusal: param.NewOpt(it.Text)}}
				assistant(m.OfAssistant)
				out = append(out, m)
			case it.Role == "assistant":
				m := openai.ChatCompletionMessageParamOfAssistant(it.Text)
				assistant(m.OfAssistant)
				out = append(out, m)
			case len(it.Content) > 0:
				out = append(out, openai.UserMessage(chatParts(it.Content)))
			default:
				out = append(out, openai.UserMessage(it.Text))
			}
		case ReasoningItem:
			if r := it.Reasoning; reasoning && r != nil && r.Field == fieldReasoningContent && r.Text != "" {
				thought = &r.Text
			}
		case FunctionCall:
			if lastAssistant == nil {
				m := openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{}}
				assistant(m.OfAssistant)
				out = append(out, m)
			}
			tc := &openai.ChatCompletionMessageFunctionToolCallParam{ID: it.CallID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: it.Name, Arguments: sentArguments(it.Arguments)}}
			e := extras.get(it.CallID)
			if e.content != nil {
				tc.SetExtraFields(map[string]any{"extra_content": e.content})
			}
			if e.details != nil && len(lastAssistant.ToolCalls) == 0 {
				addExtraField(lastAssistant, "reasoning_details", e.details)
			}
			lastAssistant.ToolCalls = append(lastAssistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: tc})
		case FunctionOutput:
			lastAssistant = nil
			out = append(out, openai.ToolMessage(it.Output, it.CallID))
		}
	}
	if carried {
		// Every assistant message, not only those with calls: DeepSeek V4
		// refuses a request with any assistant message without the field
		// ("The `reasoning_content` in the thinking mode must be passed
		// back to the API"; openclaw/openclaw issue 73417, Hmbown/Codewhale
		// 0.5.0, vercel/ai pull request 13203), and a session has such
		// messages: another model's answers before, kin's note of a turn
		// that failed. One failed turn made every later request fail.
		for _, m := range out {
			if a := m.OfAssistant; a != nil {
				addExtraField(a, fieldReasoningContent, "")
			}
		}
	}
	return out
}

// addExtraField sends key with value on an assistant message, beside the
// fields it has, unless it has key already.
func addExtraField(a *openai.ChatCompletionAssistantMessageParam, key string, value any) {
	fields := a.ExtraFields()
	if _, ok := fields[key]; ok {
		return
	}
	merged := map[string]any{key: value}
	for k, v := range fields {
		merged[k] = v
	}
	a.SetExtraFields(merged)
}

func chatParts(cs []Content) []openai.ChatCompletionContentPartUnionParam {
	out := make([]openai.ChatCompletionContentPartUnionParam, 0, len(cs))
	for _, c := range cs {
		if c.ImageMIME != "" {
			out = append(out, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(c)}))
			continue
		}
		out = append(out, openai.TextContentPart(c.Text))
	}
	return out
}

// sentArguments are a call's arguments as a request carries them back: as
// the model sent them when they are a JSON object, else an empty object.
// The servers that turn the conversation into a chat template parse every
// call's arguments and refuse the whole request when one does not parse
// (Ollama: "invalid tool call arguments", HTTP 400, and "failed to parse
// function call arguments" on /v1/responses; llama-server: "Failed to parse
// tool call arguments as JSON", HTTP 500). A local model's one malformed
// call (kin ran nothing and told it so in the call's output, which quotes
// what it sent) would otherwise make every later request of the session
// fail, the conversation only growing.
func sentArguments(args string) string {
	if !gjson.Valid(args) || !gjson.Parse(args).IsObject() {
		return "{}"
	}
	return args
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
