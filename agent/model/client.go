// Package model talks to a model service that speaks the OpenAI Responses
// API, through openai-go, streaming.
//
// It never retries: a request that may have reached the service is not sent
// again (the client's retries are switched off), and every failure is turned
// into a message a person can act on. It never logs the API key.
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
	"github.com/openai/openai-go/v3/responses"

	"github.com/kin-dev/kin/agent/tool"
)

// Item is one entry of the conversation sent to the model.
type Item struct {
	Role      string // "user", "assistant" for messages
	Text      string
	CallID    string // function_call and function_call_output
	Name      string
	Arguments string
	Output    string
	Kind      ItemKind
}

// ItemKind distinguishes messages from tool calls and their outputs.
type ItemKind int

const (
	Message ItemKind = iota
	FunctionCall
	FunctionOutput
)

// Request is one model call.
type Request struct {
	Instructions string
	Input        []Item
	Tools        []tool.Spec
}

// Call is a function call the model asked for.
type Call struct {
	CallID    string
	Name      string
	Arguments string
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Response is what one streamed model call produced.
type Response struct {
	Text  string
	Calls []Call
	Usage Usage
}

// Client is a Responses API client with retries off. It uses the SDK's
// responses service alone: the SDK's root package registers every API it
// has at start-up, which would cost an editor milliseconds on every spawn.
type Client struct {
	svc   responses.ResponseService
	model string
}

// New builds a client for the configuration.
func New(c Config, httpClient *http.Client) *Client {
	opts := []option.RequestOption{
		option.WithAPIKey(c.APIKey),
		option.WithMaxRetries(0), // nothing is re-sent once it may have arrived
		option.WithRequestTimeout(0),
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	opts = append(opts, option.WithHTTPClient(idleClient(httpClient, c.IdleTimeout)))
	if c.BaseURL == "" {
		opts = append(opts, option.WithBaseURL("https://api.openai.com/v1/"))
	}
	return &Client{svc: responses.NewResponseService(opts...), model: c.Model}
}

// Stream runs one model call, handing each text delta to onDelta as it
// arrives, and returns the whole response once the service said it
// completed. A stream that ends without response.completed is an error.
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	params := responses.ResponseNewParams{
		Model: c.model,
		Store: param.NewOpt(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: inputItems(req.Input)},
	}
	if req.Instructions != "" {
		params.Instructions = param.NewOpt(req.Instructions)
	}
	for _, s := range req.Tools {
		params.Tools = append(params.Tools, functionTool(s))
	}
	var failure httpFailure
	stream := c.svc.NewStreaming(ctx, params, option.WithMiddleware(failure.capture))
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
			if onDelta != nil {
				onDelta(ev.Delta)
			}
		case "response.output_item.done":
			if ev.Item.Type == "function_call" {
				out.Calls = append(out.Calls, Call{CallID: ev.Item.CallID, Name: ev.Item.Name, Arguments: ev.Item.Arguments.OfString})
			}
		case "response.completed":
			completed = true
			out.Usage = Usage{InputTokens: ev.Response.Usage.InputTokens, OutputTokens: ev.Response.Usage.OutputTokens}
		case "response.failed", "response.incomplete":
			msg := ev.Response.Error.Message
			if msg == "" {
				msg = string(ev.Response.Status)
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

func inputItems(items []Item) responses.ResponseInputParam {
	out := make(responses.ResponseInputParam, 0, len(items))
	for _, it := range items {
		switch it.Kind {
		case Message:
			role := responses.EasyInputMessageRoleUser
			if it.Role == "assistant" {
				role = responses.EasyInputMessageRoleAssistant
			}
			out = append(out, responses.ResponseInputItemParamOfMessage(it.Text, role))
		case FunctionCall:
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(it.Arguments, it.CallID, it.Name))
		case FunctionOutput:
			o := responses.ResponseInputItemParamOfFunctionCallOutput(it.Output)
			o.OfFunctionCallOutput.CallID = param.NewOpt(it.CallID)
			out = append(out, o)
		}
	}
	return out
}

func functionTool(s tool.Spec) responses.ToolUnionParam {
	var params map[string]any
	if err := json.Unmarshal(s.Parameters, &params); err != nil || params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	t := responses.ToolParamOfFunction(s.Name, params, s.Strict)
	if s.Description != "" {
		t.OfFunction.Description = param.NewOpt(s.Description)
	}
	return t
}
