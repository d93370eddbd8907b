package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
)

// TestOpenRoutersPlainReasoningGoesBackAsReasoningContent: reasoning
// streamed as "reasoning", with no reasoning_details, before a call goes
// back as reasoning_content when the stream is OpenRouter's (DeepSeek V4
// refuses the next request without it), and not when only a provider is
// named by a gateway that is not OpenRouter (Groq, behind one, refuses the
// field), nor when reasoning_details came (they go back instead).
func TestOpenRoutersPlainReasoningGoesBackAsReasoningContent(t *testing.T) {
	chunk := func(id, provider, delta, finish string) string {
		p := ""
		if provider != "" {
			p = `"provider":"` + provider + `",`
		}
		return `data: {"id":"` + id + `",` + p + `"object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` +
			delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	stream := func(id, provider, reasoningDelta string) string {
		return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" +
			chunk(id, provider, reasoningDelta, "null") +
			chunk(id, provider, `{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{}"}}]}`, "null") +
			chunk(id, provider, `{}`, `"tool_calls"`) + "data: [DONE]\n\n"
	}
	cases := []struct {
		name, body string
		want       string // reasoning_content on the next request's assistant message ("": none)
	}{
		{"OpenRouter, reasoning alone", stream("gen-17-aB", "DeepSeek", `{"reasoning":"Read it."}`), "Read it."},
		{"a gateway naming its provider", stream("chatcmpl-9", "groq", `{"reasoning":"Read it."}`), ""},
		{"no provider named", stream("chatcmpl-9", "", `{"reasoning":"Read it."}`), ""},
		{"OpenRouter, with reasoning_details", stream("gen-17-aB", "DeepSeek",
			`{"reasoning":"Read it.","reasoning_details":[{"type":"reasoning.text","text":"Read it.","format":"unknown","index":0}]}`), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := modeltest.New()
			t.Cleanup(srv.Close)
			srv.Script(modeltest.Reply{Recorded: []byte(c.body)}, modeltest.Reply{Text: []string{"ok"}})
			cl := client(srv, model.APIChat)
			in := []model.Item{{Role: "user", Text: "hi"}}
			var items []model.Item
			h := model.Handlers{ReasoningDone: func(r model.Reasoning) {
				if r.CarriesOver() { // as the conversation keeps it
					items = append(items, model.Item{Kind: model.ReasoningItem, Reasoning: &r})
				}
			}}
			resp, err := cl.Stream(context.Background(), model.Request{Input: in, Effort: "high"}, h)
			if err != nil || len(resp.Calls) != 1 {
				t.Fatalf("calls %+v, %v", resp, err)
			}
			c0 := resp.Calls[0]
			in = append(append(in, items...), model.Item{Kind: model.FunctionCall, CallID: c0.CallID, Name: c0.Name, Arguments: c0.Arguments},
				model.Item{Kind: model.FunctionOutput, CallID: c0.CallID, Output: "x"})
			if _, err := cl.Stream(context.Background(), model.Request{Input: in, Effort: "high"}, model.Handlers{}); err != nil {
				t.Fatal(err)
			}
			msg := gjson.GetBytes(srv.Requests()[1].Raw, `messages.#(role=="assistant")`)
			if got := msg.Get("reasoning_content"); got.Str != c.want || (c.want == "" && got.Exists()) {
				t.Errorf("the assistant message went back as %s", msg.Raw)
			}
			if strings.Contains(c.name, "reasoning_details") && !msg.Get("reasoning_details").Exists() {
				t.Errorf("reasoning_details did not go back: %s", msg.Raw)
			}
		})
	}
}
