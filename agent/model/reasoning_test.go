package model_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
)

func client(srv *modeltest.Server, api string) *model.Client {
	return model.New(model.Config{APIKey: "sk-test", BaseURL: srv.URL(), Model: "mock-1", API: api}, nil)
}

func TestReasoningSummariesStreamAndItemsComeBackEncrypted(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(modeltest.Reply{
		Reasoning: []modeltest.Reasoning{{Summary: []string{"**Looking** at a.go", "It needs a fix."}, Encrypted: "enc-1"}},
		Calls:     []modeltest.Call{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
	}, modeltest.Reply{Text: []string{"Fixed."}})
	c := client(srv, "")
	var summary strings.Builder
	var done []model.Reasoning
	h := model.Handlers{Reasoning: func(s string) { summary.WriteString(s) }, ReasoningDone: func(r model.Reasoning) { done = append(done, r) }}
	resp, err := c.Stream(context.Background(), model.Request{Effort: "high", Input: []model.Item{{Role: "user", Text: "fix a.go"}}}, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary.String(); got != "**Looking** at a.go\n\nIt needs a fix." {
		t.Errorf("summary deltas %q", got)
	}
	if len(done) != 1 || done[0].Encrypted != "enc-1" || len(done[0].Summary) != 2 || len(resp.Reasoning) != 1 || len(resp.Calls) != 1 {
		t.Fatalf("reasoning items %+v, response %+v", done, resp)
	}
	req := srv.Requests()[0]
	if len(req.Include) != 1 || req.Include[0] != "reasoning.encrypted_content" || req.Reasoning["summary"] != "auto" ||
		req.Effort() != "high" || req.Store == nil || *req.Store {
		t.Errorf("request include %v reasoning %v store %v", req.Include, req.Reasoning, req.Store)
	}

	// The next request carries the item back, before the call it led to.
	in := []model.Item{{Role: "user", Text: "fix a.go"},
		{Kind: model.ReasoningItem, Reasoning: &done[0]},
		{Kind: model.FunctionCall, CallID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
		{Kind: model.FunctionOutput, CallID: "call_1", Output: "package a"}}
	if _, err := c.Stream(context.Background(), model.Request{Input: in}, model.Handlers{}); err != nil {
		t.Fatal(err)
	}
	items := srv.Requests()[1].ReasoningItems()
	if len(items) != 1 || items[0]["encrypted_content"] != "enc-1" || items[0]["id"] != done[0].ID {
		t.Fatalf("reasoning items sent back: %v", items)
	}
}

// TestAServiceWithoutReasoningIsDetectedOnce: a refusal that names the
// reasoning parameters is followed by one new request without them, a
// notice, and no reasoning parameters on any later request.
func TestAServiceWithoutReasoningIsDetectedOnce(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.RefuseParams("reasoning", "include")
	srv.Script(modeltest.Reply{Text: []string{"one"}}, modeltest.Reply{Text: []string{"two"}})
	c := client(srv, "")
	var notices []string
	h := model.Handlers{Notice: func(s string) { notices = append(notices, s) }}
	ask := func() string {
		t.Helper()
		// A reasoning item of an earlier answer must not go to a service
		// without reasoning either.
		in := []model.Item{{Role: "user", Text: "hi"}, {Kind: model.ReasoningItem, Reasoning: &model.Reasoning{ID: "rs_1", Encrypted: "enc"}},
			{Role: "assistant", Text: "hello"}, {Role: "user", Text: "again"}}
		resp, err := c.Stream(context.Background(), model.Request{Input: in, Effort: "low"}, h)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Text
	}
	if ask() != "one" || ask() != "two" {
		t.Fatal("wrong answers")
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Reasoning == nil || reqs[1].Reasoning != nil || reqs[2].Reasoning != nil || reqs[2].Include != nil ||
		len(reqs[0].ReasoningItems()) != 1 || len(reqs[1].ReasoningItems()) != 0 || len(reqs[2].ReasoningItems()) != 0 {
		t.Fatalf("requests: want one refused with reasoning, then two without; got %d", len(reqs))
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "goes on without them") || !strings.Contains(notices[0], "Unsupported parameter") {
		t.Errorf("notices %q", notices)
	}
	if on, why := c.Reasoning(); on || why == "" {
		t.Errorf("reasoning still on (%v, %q)", on, why)
	}
}

// TestOtherRefusalsAreNotResent: a refusal that names something else, or a
// failure that may have reached the model, ends the request.
func TestOtherRefusalsAreNotResent(t *testing.T) {
	for _, rep := range []modeltest.Reply{
		{HTTPStatus: 400, ErrorMessage: "Invalid 'input[0].content': string too long.", ErrorParam: "input[0].content"},
		{HTTPStatus: 500, ErrorMessage: "reasoning failed"},
		{Text: []string{"a", "b"}, DropAfter: 4},
	} {
		srv := modeltest.New()
		srv.Script(rep)
		_, err := client(srv, "").Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{})
		if err == nil || len(srv.Requests()) != 1 {
			t.Errorf("%+v: err %v after %d requests; want one request and an error", rep, err, len(srv.Requests()))
		}
		srv.Close()
	}
}

func TestAnOverflowingConversationIsAnOverflow(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(modeltest.Reply{HTTPStatus: 400, ErrorCode: "context_length_exceeded",
		ErrorMessage: "Your input exceeds the context window of this model. Please adjust your input and try again."})
	_, err := client(srv, "").Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{})
	if !model.IsOverflow(err) || !strings.Contains(err.Error(), "contextWindow") {
		t.Fatalf("error %v", err)
	}
	if model.IsOverflow(errors.New("context length")) {
		t.Error("a plain error is not a refusal")
	}
}

func TestImagesGoAsInputImages(t *testing.T) {
	for _, api := range []string{model.APIResponses, model.APIChat} {
		srv := modeltest.New()
		srv.Script(modeltest.Reply{Text: []string{"a cat"}})
		msg := model.Item{Role: "user", Content: []model.Content{{Text: "what is this?"}, {ImageMIME: "image/png", ImageData: "iVBORw0KGgo="}}}
		if _, err := client(srv, api).Stream(context.Background(), model.Request{Input: []model.Item{msg}}, model.Handlers{}); err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		parts := srv.Requests()[0].InputParts()
		if len(parts) != 2 || parts[0]["text"] != "what is this?" || parts[1]["type"] != "input_image" ||
			parts[1]["image_url"] != "data:image/png;base64,iVBORw0KGgo=" {
			t.Errorf("%s: parts %v", api, parts)
		}
		srv.Close()
	}
}

// TestChatCompletionsRunsATurnWithACall: text, a streamed tool call and the
// conversation after it, over Chat Completions.
func TestChatCompletionsRunsATurnWithACall(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"thinking"}}}, Text: []string{"Let me ", "look."},
			Calls: []modeltest.Call{{ID: "call_7", Name: "read_file", Arguments: `{"path":"a.go"}`}}, Usage: modeltest.Usage{Input: 40, Output: 9}},
		modeltest.Reply{Text: []string{"It is fine."}},
	)
	c := client(srv, model.APIChat)
	spec := tool.Spec{Name: "read_file", Description: "read", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	var text, reasoning strings.Builder
	h := model.Handlers{Text: func(s string) { text.WriteString(s) }, Reasoning: func(s string) { reasoning.WriteString(s) }}
	in := []model.Item{{Role: "user", Text: "check a.go"}}
	resp, err := c.Stream(context.Background(), model.Request{Instructions: "be brief", Input: in, Tools: []tool.Spec{spec}, Effort: "low"}, h)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != "Let me look." || reasoning.String() != "thinking" || resp.Usage.InputTokens != 40 || resp.Usage.OutputTokens != 9 {
		t.Errorf("text %q reasoning %q usage %+v", text.String(), reasoning.String(), resp.Usage)
	}
	if len(resp.Calls) != 1 || resp.Calls[0] != (model.Call{CallID: "call_7", Name: "read_file", Arguments: `{"path":"a.go"}`}) {
		t.Fatalf("calls %+v", resp.Calls)
	}
	in = append(in, model.Item{Role: "assistant", Text: resp.Text},
		model.Item{Kind: model.FunctionCall, CallID: "call_7", Name: "read_file", Arguments: `{"path":"a.go"}`},
		model.Item{Kind: model.FunctionOutput, CallID: "call_7", Output: "package a"})
	resp, err = c.Stream(context.Background(), model.Request{Instructions: "be brief", Input: in, Tools: []tool.Spec{spec}}, model.Handlers{})
	if err != nil || resp.Text != "It is fine." {
		t.Fatalf("second answer %v %v", resp, err)
	}
	reqs := srv.Requests()
	first, second := reqs[0], reqs[1]
	if first.API != "chat" || first.Instructions != "be brief" || first.Effort() != "low" || len(first.Tools) != 1 || first.Tools[0]["name"] != "read_file" {
		t.Errorf("first request %+v", first)
	}
	if out, ok := second.LastToolOutput(); !ok || out != "package a" || second.Messages[2]["role"] != "assistant" || second.Messages[3]["role"] != "tool" {
		t.Errorf("second request messages %v", second.Messages)
	}
}

func TestChatCompletionsFailuresAreExplained(t *testing.T) {
	cases := []struct {
		reply modeltest.Reply
		want  string
	}{
		{modeltest.Reply{Text: []string{"a"}, NoCompleted: true}, "without finishing it"},
		{modeltest.Reply{Text: []string{"a"}, Failed: "overloaded"}, "overloaded"},
		{modeltest.Reply{HTTPStatus: 429}, "HTTP 429"},
	}
	for _, tc := range cases {
		srv := modeltest.New()
		srv.Script(tc.reply)
		_, err := client(srv, model.APIChat).Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(srv.Requests()) != 1 {
			t.Errorf("%+v: error %v after %d requests", tc.reply, err, len(srv.Requests()))
		}
		srv.Close()
	}
}

// The idle timeout bounds a Chat Completions service that goes silent too.
func TestChatCompletionsIdleTimeout(t *testing.T) {
	srv := modeltest.New()
	t.Cleanup(srv.Close)
	srv.Script(modeltest.Reply{Text: []string{"a", "b"}, Stall: modeltest.StallMidStream})
	c := model.New(model.Config{APIKey: "sk-test", BaseURL: srv.URL(), Model: "mock-1", API: model.APIChat, IdleTimeout: 300 * time.Millisecond}, nil)
	_, err := c.Stream(context.Background(), model.Request{Input: []model.Item{{Role: "user", Text: "hi"}}}, model.Handlers{})
	var idle *model.IdleError
	if !errors.As(err, &idle) || idle.Phase != "streaming" || len(srv.Requests()) != 1 {
		t.Fatalf("error %v after %d requests", err, len(srv.Requests()))
	}
}
