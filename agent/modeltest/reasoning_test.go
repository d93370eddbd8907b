package modeltest_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/kin-dev/kin/agent/modeltest"
)

func TestReasoningItemsStreamAsTheAPIStreamsThem(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"one", "two"}, Encrypted: "enc"}}, Text: []string{"ok"}},
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"x"}}}, Text: []string{"ok"}})
	p := userParams("hi")
	p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	p.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
	r := collect(client.Responses.NewStreaming(ctxTimeout(t), p))
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkEvents(t, r.events)
	var summary string
	for _, ev := range r.events {
		if ev.Type == "response.reasoning_summary_text.delta" {
			summary += ev.Delta
		}
	}
	out := r.completed.Output
	if summary != "onetwo" || len(out) != 2 || out[0].Type != "reasoning" || out[0].EncryptedContent != "enc" || len(out[0].Summary) != 2 {
		t.Fatalf("summary %q output %+v", summary, out)
	}
	// Without the include, no encrypted content (as the API does).
	r = collect(client.Responses.NewStreaming(ctxTimeout(t), userParams("hi")))
	if r.err != nil || r.completed.Output[0].EncryptedContent != "" || !slices.Contains(r.types, "response.reasoning_summary_part.added") {
		t.Fatalf("err %v output %+v", r.err, r.completed.Output)
	}
}

func TestRefusedParametersAndInvalidInputAreRefusedLikeTheAPI(t *testing.T) {
	srv, client := start(t)
	srv.RefuseParams("reasoning")
	srv.Script(modeltest.Reply{Text: []string{"kept"}})
	p := userParams("hi")
	p.Reasoning = shared.ReasoningParam{Effort: shared.ReasoningEffortLow}
	_, err := client.Responses.New(ctxTimeout(t), p)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "reasoning" {
		t.Fatalf("error %v", err)
	}
	// The refused request consumed no reply.
	srv.RefuseParams()
	p = userParams("hi")
	p.Store = openai.Bool(false)
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfReasoning("rs_1", nil),
		responses.ResponseInputItemParamOfMessage("hello", responses.EasyInputMessageRoleAssistant),
	}}
	if _, err = client.Responses.New(ctxTimeout(t), p); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "Items are not persisted") {
		t.Fatalf("a reasoning item without encrypted content under store false: %v", err)
	}
	resp, err := client.Responses.New(ctxTimeout(t), userParams("hi"))
	if err != nil || resp.OutputText() != "kept" {
		t.Fatalf("after refusals: %v %v", resp, err)
	}
}

func TestChatCompletionsStream(t *testing.T) {
	srv, client := start(t)
	srv.Script(modeltest.Reply{Text: []string{"Hel", "lo"}, Calls: []modeltest.Call{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a"}`}},
		Usage: modeltest.Usage{Input: 7, Output: 3}})
	stream := client.Chat.Completions.NewStreaming(ctxTimeout(t), openai.ChatCompletionNewParams{
		Model:         "gpt-test",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("be brief"), openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	ch := acc.Choices[0]
	if ch.Message.Content != "Hello" || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"path":"a"}` || acc.Usage.PromptTokens != 7 {
		t.Fatalf("accumulated %+v usage %+v", ch, acc.Usage)
	}
	q := srv.Requests()[0]
	if q.API != "chat" || q.Instructions != "be brief" || q.LastUserText() != "hi" {
		t.Errorf("request %+v", q)
	}
}
