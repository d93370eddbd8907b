package model

import "testing"

// TestReasoningDetailsGoBackAsOpenRouterTakesThem: Claude's text pieces and
// the signature that comes after them make one signed entry; an encrypted
// entry goes back as it came (its numbers too); unsigned Claude or Gemini
// text is left out, other formats' text kept; nothing came, nothing goes.
func TestReasoningDetailsGoBackAsOpenRouterTakesThem(t *testing.T) {
	cases := []struct {
		name   string
		deltas []string
		want   string
	}{
		{"claude signed", []string{
			`[{"type":"reasoning.text","text":"Checking the","format":"anthropic-claude-v1","index":0}]`,
			`[{"type":"reasoning.text","text":" lock order.","format":"anthropic-claude-v1","index":0}]`,
			`[{"type":"reasoning.text","signature":"EqQBCkYIBxgCKkA4","format":"anthropic-claude-v1","index":0}]`,
		}, `[{"format":"anthropic-claude-v1","index":0,"signature":"EqQBCkYIBxgCKkA4","text":"Checking the lock order.","type":"reasoning.text"}]`},
		{"claude unsigned", []string{`[{"type":"reasoning.text","text":"Hm.","index":0}]`}, ``},
		{"gemini", []string{
			`[{"type":"reasoning.text","text":"Plan.","format":"google-gemini-v1","index":0}]`,
			`[{"type":"reasoning.encrypted","data":"CiQB","id":"tool_x","format":"google-gemini-v1","index":1.50}]`,
		}, `[{"data":"CiQB","format":"google-gemini-v1","id":"tool_x","index":1.50,"type":"reasoning.encrypted"}]`},
		{"openai", []string{
			`[{"type":"reasoning.summary","summary":"Reading.","format":"openai-responses-v1","index":0}]`,
			`[{"type":"reasoning.text","text":"Plain.","format":"openai-responses-v1","index":1}]`,
		}, `[{"format":"openai-responses-v1","index":0,"summary":"Reading.","type":"reasoning.summary"},{"format":"openai-responses-v1","index":1,"text":"Plain.","type":"reasoning.text"}]`},
		{"empty and junk", []string{`[]`, `null`, `[1,"x",null]`}, ``},
	}
	for _, c := range cases {
		var r reasoningDetails
		for _, d := range c.deltas {
			r.add(d)
		}
		if got := string(r.sent()); got != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
