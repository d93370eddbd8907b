package model

import (
	"math"
	"testing"
)

// A service's usage report reaches kin's sums (spend limits) only as
// counted makes it: a negative count makes the report no report (kin
// estimates), a huge one is bounded so sums never wrap around. Each API's
// reading goes through it.
func TestUsageReportsAreCountedSanely(t *testing.T) {
	huge := `{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}`
	for name, c := range map[string]struct {
		api, body string
		want      Usage
	}{
		"responses negative": {APIResponses, `{"type":"response.completed","response":{"output":[{"type":"message","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":-5000,"output_tokens":4}}}`, Usage{}},
		"responses huge": {APIResponses, `{"type":"response.completed","response":{"output":[{"type":"message","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":9223372036854775807,"output_tokens":9223372036854775807,"input_tokens_details":{"cached_tokens":9223372036854775807}}}}`,
			Usage{InputTokens: MaxTokens, OutputTokens: MaxTokens, CachedInputTokens: MaxTokens}},
		"chat negative": {APIChat, `{"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":-9}}`, Usage{}},
		"chat huge":     {APIChat, `{"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":` + huge + `}`, Usage{InputTokens: MaxTokens, OutputTokens: MaxTokens}},
		"groq negative": {APIChat, `{"id":"c","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"x_groq":{"usage":{"prompt_tokens":-1,"completion_tokens":2}}}`, Usage{}},
	} {
		cl, _ := newService(t, c.api, []string{c.body})
		resp, err := ask(t, cl, Handlers{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if resp.Usage != c.want {
			t.Errorf("%s: usage %+v, want %+v", name, resp.Usage, c.want)
		}
		if s := resp.Usage.InputTokens + resp.Usage.OutputTokens; s < 0 || s > math.MaxInt64/2 {
			t.Errorf("%s: a sum of %d", name, s)
		}
	}
}
