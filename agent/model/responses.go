package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

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
	if len(req.Tools) > 0 || req.Instructions != "" {
		tools := toolsFor(req.Tools)
		params.Tools = tools.responses
		params.PromptCacheKey = param.NewOpt(promptCacheKey(req.Instructions, tools))
	}
	var failure httpFailure
	// The request NewStreaming makes, with the body handed to openai-go's
	// SSE stream (through sseDecoder), so that each event is decoded into
	// a streamEvent (events.go) rather than the SDK's full event union.
	var raw *http.Response
	_, err := a.svc.New(ctx, params, option.WithMiddleware(failure.capture),
		option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	stream := ssestream.NewStream[streamEvent](sseDecoder(raw), err)
	defer stream.Close()
	ans := newAnswer(h)
	ans.out.Accepted = failure.accepted()
	err = readResponses(stream, ans)
	if err == nil {
		err = stream.Err()
		if err != nil {
			err = explain(ctx, err, failure)
		}
	}
	if errors.Is(err, errNotCompleted) {
		err = failure.unfinished("completing it (no response.completed)", ans.heard)
	}
	return ans.response(), err
}

// errNotCompleted ends a Responses stream that ended without a terminal
// event.
var errNotCompleted = errors.New("not completed")

// readResponses reads a Responses stream into the answer. It returns nil
// once the response completed with something in it (or the stream ended
// with an error stream.Err() says), and the failure of a response the
// service could not finish.
func readResponses(stream *ssestream.Stream[streamEvent], ans *answer) error {
	// items counts the output items that ended, so a response.completed
	// whose output holds what never streamed is read from there.
	items := 0
	for stream.Next() {
		ans.heard = true
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			ans.addText(ev.Delta)
		case "response.refusal.delta":
			ans.addRefusal(ev.Delta)
		case "response.reasoning_summary_part.added":
			if ev.SummaryIndex > 0 {
				ans.addReasoning("\n\n", false) // summary parts are paragraphs
			}
		case "response.reasoning_summary_text.delta":
			ans.addReasoning(ev.Delta, false)
		case "response.reasoning_text.delta":
			ans.addReasoning(ev.Delta, true)
		case "response.output_item.added":
			if ev.Item.Type == "message" {
				ans.startMessage(ev.Item.Phase)
			}
		case "response.output_item.done":
			items++
			endItem(ans, ev.Item)
		case "response.completed":
			ans.out.Usage = ev.Usage
			if items == 0 {
				for _, it := range ev.Output {
					endItem(ans, it)
				}
			}
			if ans.response().empty() {
				return errEmpty(" in response.completed")
			}
			return nil
		case "response.incomplete":
			ans.out.Usage = ev.Usage
			return incomplete(ev.Reason)
		case "response.failed":
			ans.out.Usage = ev.Usage
			msg := ev.Failure
			if msg == "" {
				msg = ev.Status
			}
			return fmt.Errorf("the model service could not finish the answer: %s; nothing was retried", msg)
		case "error":
			return fmt.Errorf("the model service reported an error: %s", ev.Message)
		}
	}
	if stream.Err() != nil {
		return nil // the caller explains it
	}
	return errNotCompleted
}

// endItem takes an output item that ended.
func endItem(ans *answer, it outputItem) {
	switch it.Type {
	case "message":
		ans.endMessage(it)
	case "function_call":
		ans.addCall(Call{CallID: it.CallID, Name: it.Name, Arguments: it.Arguments}, it.ID)
	case "reasoning":
		ans.endReasoning(Reasoning{ID: it.ID, Summary: it.Summary, Encrypted: it.Encrypted, Text: it.Reasoning})
	}
}

// incomplete is the failure of an answer the service stopped: at the output
// limit, by a content filter, or for a reason it named.
func incomplete(reason string) error {
	switch reason {
	case "max_output_tokens":
		return errors.New("the model service stopped the answer at its output limit (max_output_tokens); nothing was retried")
	case "content_filter":
		return errors.New("the model service stopped the answer with its content filter (content_filter); nothing was retried")
	case "":
		return errors.New("the model service could not finish the answer (incomplete, no reason given); nothing was retried")
	}
	return fmt.Errorf("the model service could not finish the answer (incomplete: %s); nothing was retried", reason)
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
			var m responses.ResponseInputItemUnionParam
			switch {
			case role == responses.EasyInputMessageRoleAssistant && it.Refusal:
				// The model's refusal goes back as the refusal part it was.
				m = responses.ResponseInputItemParamOfOutputMessage([]responses.ResponseOutputMessageContentUnionParam{
					{OfRefusal: &responses.ResponseOutputRefusalParam{Refusal: it.Text}}}, "", responses.ResponseOutputMessageStatusCompleted)
				m.OfOutputMessage.Phase = responses.ResponseOutputMessagePhase(it.Phase)
				out = append(out, m)
				continue
			case len(it.Content) > 0:
				m = responses.ResponseInputItemParamOfMessage(contentList(it.Content), role)
			default:
				m = responses.ResponseInputItemParamOfMessage(it.Text, role)
			}
			if role == responses.EasyInputMessageRoleAssistant {
				m.OfMessage.Phase = responses.EasyInputMessagePhase(it.Phase)
			}
			out = append(out, m)
		case FunctionCall:
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(sentArguments(it.Arguments), it.CallID, it.Name))
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

// toolParameters is a tool's JSON Schema as a map (an empty object schema
// when it has none).
func toolParameters(s tool.Spec) map[string]any {
	var params map[string]any
	if err := json.Unmarshal(s.Parameters, &params); err != nil || params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return params
}
