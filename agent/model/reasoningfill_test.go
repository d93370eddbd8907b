package model

import "testing"

// TestEveryAssistantMessageCarriesReasoningContentOnceAnyDoes: once a
// conversation sends reasoning_content back (DeepSeek's thinking mode after
// a tool call), every assistant message carries the field, "" where it has
// none: the text of another model before, kin's note of a turn that failed,
// a refusal. DeepSeek V4 refuses a request with an assistant message
// without it, whatever the docs say of messages without calls.
func TestEveryAssistantMessageCarriesReasoningContentOnceAnyDoes(t *testing.T) {
	in := []Item{{Role: "user", Text: "hi"},
		{Role: "assistant", Text: "Hello (another model's answer)."},
		{Role: "user", Text: "what day is it?"},
		{Kind: ReasoningItem, Reasoning: &Reasoning{Text: "I need the date.", Field: fieldReasoningContent}},
		{Kind: FunctionCall, CallID: "call_1", Name: "get_date", Arguments: "{}"},
		{Kind: FunctionOutput, CallID: "call_1", Output: "2026-06-13"},
		{Role: "assistant", Text: "[no answer: this turn ended failed: the connection was cut]"},
		{Role: "assistant", Text: "I can't help with that.", Refusal: true},
		{Role: "user", Text: "and then?"}}
	cl, s := newService(t, APIChat, []string{chunk(`{"content":"Friday."}`, "stop")})
	if _, err := ask(t, cl, Handlers{}, in...); err != nil {
		t.Fatal(err)
	}
	msgs := s.request(0).Get("messages").Array()
	n := 0
	for _, m := range msgs {
		if m.Get("role").Str != "assistant" {
			continue
		}
		n++
		if r := m.Get("reasoning_content"); !r.Exists() {
			t.Errorf("an assistant message without reasoning_content: %s", m.Raw)
		}
	}
	if n != 4 || msgs[3].Get("reasoning_content").Str != "I need the date." {
		t.Fatalf("messages %v", msgs)
	}
}
