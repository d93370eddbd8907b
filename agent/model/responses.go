package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kin-dev/kin/agent/tool"
)

// responsesAPI speaks the Responses API. It uses the SDK's responses
// service alone: the SDK's root package registers every API it has at
// start-up, which costs an editor a little on every spawn (the chat client
// needs it all the same).
type responsesAPI struct {
	svc   responses.ResponseService
	model string
}

func newResponses(c Config, hc *http.Client) *responsesAPI {
	return &responsesAPI{svc: responses.NewResponseService(requestOptions(c, hc)...), model: c.Model}
}

// requestOptions are the SDK options every API client uses: the key, no
// retries, no overall timeout (the idle timeout bounds silence instead).
func requestOptions(c Config, hc *http.Client) []option.RequestOption {
	base := c.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	return []option.RequestOption{
		option.WithAPIKey(c.APIKey),
		option.WithMaxRetries(0), // nothing is re-sent once it may have arrived
		option.WithRequestTimeout(0),
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
	}
}

func (a *responsesAPI) stream(ctx context.Context, req Request, h Handlers, reasoning bool) (*Response, error) {
	params := responses.ResponseNewParams{
		Model: a.model,
		Store: param.NewOpt(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: inputItems(req.Input, reasoning)},
	}
	if req.Instructions != "" {
		params.Instructions = param.NewOpt(req.Instructions)
	}
	if reasoning {
		// Without store, the chain of thought survives a tool call only
		// if the service hands it over encrypted and kin sends it back.
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		params.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto, Effort: shared.ReasoningEffort(req.Effort)}
	}
	for _, s := range req.Tools {
		params.Tools = append(params.Tools, functionTool(s))
	}
	var failure httpFailure
	// The request NewStreaming makes, with the body handed to openai-go's
	// SSE stream as it is, so that each event is decoded into a
	// streamEvent (events.go) rather than the SDK's full event union.
	var raw *http.Response
	_, err := a.svc.New(ctx, params, option.WithMiddleware(failure.capture),
		option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	stream := ssestream.NewStream[streamEvent](ssestream.NewDecoder(raw), err)
	defer stream.Close()

	var out Response
	// The text is built linearly (+= copied the whole answer on every
	// delta); every return below hands back &out, so out.Text is set then.
	var text strings.Builder
	defer func() { out.Text = text.String() }()
	completed := false
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
			h.text(ev.Delta)
		case "response.reasoning_summary_part.added":
			if ev.SummaryIndex > 0 {
				h.reasoning("\n\n") // summary parts are paragraphs
			}
		case "response.reasoning_summary_text.delta":
			h.reasoning(ev.Delta)
		case "response.output_item.done":
			switch ev.Item.Type {
			case "function_call":
				out.Calls = append(out.Calls, Call{CallID: ev.Item.CallID, Name: ev.Item.Name, Arguments: ev.Item.Arguments})
			case "reasoning":
				r := Reasoning{ID: ev.Item.ID, Summary: ev.Item.Summary, Encrypted: ev.Item.Encrypted}
				out.Reasoning = append(out.Reasoning, r)
				h.reasoningDone(r)
			}
		case "response.completed":
			completed = true
			out.Usage = ev.Usage
		case "response.failed", "response.incomplete":
			msg := ev.Failure
			if msg == "" {
				msg = ev.Status
			}
			return &out, fmt.Errorf("the model service could not finish the answer: %s", msg)
		case "error":
			return &out, fmt.Errorf("the model service reported an error: %s", ev.Message)
		}
	}
	if err := stream.Err(); err != nil {
		return &out, explain(ctx, err, failure)
	}
	if !completed {
		return &out, errors.New("the model service ended the answer without completing it (no response.completed); nothing was retried")
	}
	return &out, nil
}

// inputItems is the conversation in the Responses API's shapes. Reasoning
// items go only to a service that takes reasoning parameters, and only
// with their encrypted content (store is off: an item the service would
// have to look up by id is refused).
func inputItems(items []Item, reasoning bool) responses.ResponseInputParam {
	out := make(responses.ResponseInputParam, 0, len(items))
	for _, it := range items {
		switch it.Kind {
		case Message:
			role := responses.EasyInputMessageRoleUser
			switch it.Role {
			case "assistant":
				role = responses.EasyInputMessageRoleAssistant
			case "developer":
				role = responses.EasyInputMessageRoleDeveloper
			}
			if len(it.Content) > 0 {
				out = append(out, responses.ResponseInputItemParamOfMessage(contentList(it.Content), role))
			} else {
				out = append(out, responses.ResponseInputItemParamOfMessage(it.Text, role))
			}
		case FunctionCall:
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(it.Arguments, it.CallID, it.Name))
		case FunctionOutput:
			o := responses.ResponseInputItemParamOfFunctionCallOutput(it.Output)
			o.OfFunctionCallOutput.CallID = param.NewOpt(it.CallID)
			out = append(out, o)
		case ReasoningItem:
			if !reasoning || it.Reasoning == nil || it.Reasoning.Encrypted == "" {
				continue
			}
			summary := make([]responses.ResponseReasoningItemSummaryParam, 0, len(it.Reasoning.Summary))
			for _, s := range it.Reasoning.Summary {
				summary = append(summary, responses.ResponseReasoningItemSummaryParam{Text: s})
			}
			r := responses.ResponseInputItemParamOfReasoning(it.Reasoning.ID, summary)
			r.OfReasoning.EncryptedContent = param.NewOpt(it.Reasoning.Encrypted)
			out = append(out, r)
		}
	}
	return out
}

func contentList(cs []Content) responses.ResponseInputMessageContentListParam {
	out := make(responses.ResponseInputMessageContentListParam, 0, len(cs))
	for _, c := range cs {
		if c.ImageMIME != "" {
			img := responses.ResponseInputContentParamOfInputImage(responses.ResponseInputImageDetailAuto)
			img.OfInputImage.ImageURL = param.NewOpt(dataURL(c))
			out = append(out, img)
			continue
		}
		out = append(out, responses.ResponseInputContentParamOfInputText(c.Text))
	}
	return out
}

// dataURL is an image part as the APIs take inline images.
func dataURL(c Content) string { return "data:" + c.ImageMIME + ";base64," + c.ImageData }

func functionTool(s tool.Spec) responses.ToolUnionParam {
	t := responses.ToolParamOfFunction(s.Name, toolParameters(s), s.Strict)
	if s.Description != "" {
		t.OfFunction.Description = param.NewOpt(s.Description)
	}
	return t
}

// toolParameters is a tool's JSON Schema as a map (an empty object schema
// when it has none).
func toolParameters(s tool.Spec) map[string]any {
	var params map[string]any
	if err := json.Unmarshal(s.Parameters, &params); err != nil || params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return params
}
