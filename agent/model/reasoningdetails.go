package model

import (
	"bytes"
	"encoding/json"

	"github.com/tidwall/gjson"
)

// reasoningDetails gathers the reasoning_details OpenRouter streams beside
// an answer (reasoning.text pieces, reasoning.summary, reasoning.encrypted:
// Gemini's thought signature, OpenAI's and xAI's encrypted reasoning), to
// send them back on the assistant message of the answer's calls. OpenRouter
// refuses the next request of the turn without them for Gemini 3 ("Gemini
// models require OpenRouter reasoning details to be preserved in each
// request", then Google's missing thought_signature) and passes on
// DeepSeek V4's refusal ("The `reasoning_content` in the thinking mode must
// be passed back to the API"): every turn with a tool call would fail.
//
// They are gathered as OpenRouter's own AI SDK provider gathers them
// (OpenRouterTeam/ai-sdk-provider, src/chat/index.ts): consecutive
// reasoning.text pieces make one entry (text joined, the first signature
// and format kept), any other entry is kept as it came.
type reasoningDetails struct {
	entries []map[string]any
}

// add takes a delta's reasoning_details.
func (r *reasoningDetails) add(raw string) {
	for _, d := range gjson.Parse(raw).Array() {
		if !d.IsObject() {
			continue
		}
		var e map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(d.Raw)))
		dec.UseNumber() // numbers go back as they came
		if dec.Decode(&e) != nil {
			continue
		}
		last := len(r.entries) - 1
		if e["type"] != "reasoning.text" || last < 0 || r.entries[last]["type"] != "reasoning.text" {
			r.entries = append(r.entries, e)
			continue
		}
		prev := r.entries[last]
		prev["text"] = str(prev["text"]) + str(e["text"])
		for _, k := range []string{"signature", "format"} {
			if str(prev[k]) == "" && str(e[k]) != "" {
				prev[k] = e[k]
			}
		}
	}
}

// sent is the reasoning_details to send back (nil: none came). Like
// OpenRouter's provider, it leaves out a reasoning.text entry of Claude or
// Gemini without a signature: Anthropic refuses it ("Invalid signature in
// thinking block"), and Gemini's thought text is never signed (its
// reasoning.encrypted entry carries the signature).
func (r *reasoningDetails) sent() json.RawMessage {
	var out []map[string]any
	for _, e := range r.entries {
		if e["type"] == "reasoning.text" && str(e["signature"]) == "" {
			switch f := str(e["format"]); f {
			case "", "anthropic-claude-v1", "google-gemini-v1": // "" is Claude's, the first format
				continue
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return raw
}
