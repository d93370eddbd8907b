package modeltest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/kin-dev/kin/agent/modeltest"
)

// start returns a running mock and a real openai-go client pointed at it.
func start(t *testing.T) (*modeltest.Server, openai.Client) {
	t.Helper()
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	client := openai.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return srv, client
}

func ctxTimeout(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// userParams asks for a reply to one user message, offering one tool.
func userParams(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "gpt-test",
		Instructions: openai.String("be brief"),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(text)},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name:       "read_file",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
		}}},
	}
}

// toolOutputParams continues a conversation after a function call.
func toolOutputParams(user, callID, output string) responses.ResponseNewParams {
	out := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	out.OfFunctionCallOutput.CallID = openai.String(callID)
	return responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(user, responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"path":"a"}`, callID, "read_file"),
			out,
		}},
	}
}

// result is what a client saw of one stream.
type result struct {
	events    []responses.ResponseStreamEventUnion
	types     []string
	text      string            // accumulated text deltas
	args      map[string]string // accumulated argument deltas by item id
	completed *responses.Response
	failed    *responses.Response
	err       error
}

func collect(stream *ssestream.Stream[responses.ResponseStreamEventUnion]) result {
	defer stream.Close()
	r := result{args: map[string]string{}}
	for stream.Next() {
		ev := stream.Current()
		r.events = append(r.events, ev)
		r.types = append(r.types, ev.Type)
		switch ev.Type {
		case "response.output_text.delta":
			r.text += ev.Delta
		case "response.function_call_arguments.delta":
			r.args[ev.ItemID] += ev.Delta
		case "response.completed":
			resp := ev.AsResponseCompleted().Response
			r.completed = &resp
		case "response.failed":
			resp := ev.AsResponseFailed().Response
			r.failed = &resp
		}
	}
	r.err = stream.Err()
	return r
}

// checkEvents verifies sequence numbers and that every field the SDK marks
// required is present in each event, recursing into nested objects, arrays
// and union variants.
func checkEvents(t *testing.T, events []responses.ResponseStreamEventUnion) {
	t.Helper()
	for i, ev := range events {
		if ev.SequenceNumber != int64(i) {
			t.Errorf("event %d (%s): sequence_number %d", i, ev.Type, ev.SequenceNumber)
		}
		variant := ev.AsAny()
		if variant == nil {
			t.Errorf("event %d: SDK does not know type %q", i, ev.Type)
			continue
		}
		var raw any
		if err := json.Unmarshal([]byte(ev.RawJSON()), &raw); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		checkRequired(t, ev.Type, reflect.ValueOf(variant), raw, 0)
	}
}

func checkRequired(t *testing.T, where string, v reflect.Value, raw any, depth int) {
	t.Helper()
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			checkRequired(t, where, v.Elem(), raw, depth+1)
		}
	case reflect.Slice:
		arr, _ := raw.([]any)
		for i := range min(v.Len(), len(arr)) {
			checkRequired(t, fmt.Sprintf("%s[%d]", where, i), v.Index(i), arr[i], depth+1)
		}
	case reflect.Struct:
		if m := v.MethodByName("AsAny"); m.IsValid() && m.Type().NumIn() == 0 && m.Type().NumOut() == 1 {
			checkRequired(t, where, m.Call(nil)[0], raw, depth+1) // a union: check its variant
			return
		}
		obj, ok := raw.(map[string]any)
		if !ok {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			val, present := obj[name]
			if !present && strings.Contains(f.Tag.Get("api"), "required") {
				t.Errorf("%s: required field %q missing", where, name)
			}
			if present {
				checkRequired(t, where+"."+name, v.Field(i), val, depth+1)
			}
		}
	}
}
