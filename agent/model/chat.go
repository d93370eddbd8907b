package model

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"
)

// chatAPI speaks Chat Completions, for the servers that never learned the
// Responses API. Reasoning does not carry over there (the API has no
// encrypted reasoning); the effort is sent as reasoning_effort, and the
// reasoning text some servers stream (reasoning_content, reasoning) is shown
// as the reasoning summary.
type chatAPI struct {
	svc   openai.ChatCompletionService
	model string
}

func newChat(c Config, hc *http.Client) *chatAPI {
	return &chatAPI{svc: openai.NewChatCompletionService(requestOptions(c, hc)...), model: c.Model}
}

func (a *chatAPI) stream(ctx context.Context, req Request, h Handlers, reasoning bool) (*Response, error) {
	params := openai.ChatCompletionNewParams{
		Model:         a.model,
		Messages:      chatMessages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if reasoning && req.Effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.Effort)
	}
	for _, s := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: s.Name, Parameters: toolParameters(s)}
		if s.Description != "" {
			fn.Description = param.NewOpt(s.Description)
		}
		if s.Strict {
			fn.Strict = param.NewOpt(true)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	var failure httpFailure
	stream := a.svc.NewStreaming(ctx, params, option.WithMiddleware(failure.capture))
	defer stream.Close()

	var out Response
	var text strings.Builder // built linearly; out.Text is set on every return
	defer func() { out.Text = text.String() }()
	// A call's arguments come in pieces, like the text: built linearly
	// (a write_file's content would otherwise be copied on every delta).
	type pending struct {
		call Call
		args strings.Builder
	}
	calls := map[int64]*pending{}
	finish := ""
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			out.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		ch := chunk.Choices[0]
		d := ch.Delta
		if s := chatReasoning(d.JSON.ExtraFields); s != "" {
			h.reasoning(s)
		}
		if d.Content != "" {
			text.WriteString(d.Content)
			h.text(d.Content)
		}
		for _, tc := range d.ToolCalls {
			c := calls[tc.Index]
			if c == nil {
				c = &pending{}
				calls[tc.Index] = c
			}
			if tc.ID != "" {
				c.call.CallID = tc.ID
			}
			if tc.Function.Name != "" {
				c.call.Name = tc.Function.Name
			}
			c.args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != "" {
			finish = ch.FinishReason
		}
	}
	if err := stream.Err(); err != nil {
		return &out, explain(ctx, err, failure)
	}
	for _, i := range slices.Sorted(maps.Keys(calls)) {
		c := calls[i].call
		c.Arguments = calls[i].args.String()
		if c.CallID == "" {
			c.CallID = newCallID() // some servers number calls without naming them
		}
		out.Calls = append(out.Calls, c)
	}
	switch finish {
	case "":
		return &out, errors.New("the model service ended the answer without finishing it (no finish_reason); nothing was retried")
	case "length":
		return &out, errors.New("the model service stopped the answer at its length limit (finish_reason length); nothing was retried")
	case "content_filter":
		return &out, errors.New("the model service withheld the answer (finish_reason content_filter)")
	}
	return &out, nil
}

// chatReasoning is the reasoning text a server streams beside the answer
// (DeepSeek and vLLM say reasoning_content, others reasoning).
func chatReasoning(extra map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := extra[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// chatMessages is the conversation as Chat Completions messages. kin's
// notes (developer messages) go as user messages: many chat templates of
// local servers refuse a system message after the first.
func chatMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Input)+1)
	if req.Instructions != "" {
		out = append(out, openai.SystemMessage(req.Instructions))
	}
	// lastAssistant is the assistant message tool calls join, while no
	// other message came between.
	var lastAssistant *openai.ChatCompletionAssistantMessageParam
	for _, it := range req.Input {
		switch it.Kind {
		case Message:
			lastAssistant = nil
			switch {
			case it.Role == "assistant":
				m := openai.ChatCompletionMessageParamOfAssistant(it.Text)
				lastAssistant = m.OfAssistant
				out = append(out, m)
			case len(it.Content) > 0:
				out = append(out, openai.UserMessage(chatParts(it.Content)))
			default:
				out = append(out, openai.UserMessage(it.Text))
			}
		case FunctionCall:
			if lastAssistant == nil {
				m := openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{}}
				lastAssistant = m.OfAssistant
				out = append(out, m)
			}
			lastAssistant.ToolCalls = append(lastAssistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: it.CallID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: it.Name, Arguments: orEmptyObject(it.Arguments)}}})
		case FunctionOutput:
			lastAssistant = nil
			out = append(out, openai.ToolMessage(it.Output, it.CallID))
		}
	}
	return out
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

func orEmptyObject(args string) string {
	if args == "" {
		return "{}"
	}
	return args
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
