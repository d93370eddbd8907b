package modeltest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
)

// The server also speaks Chat Completions (POST /v1/chat/completions), for
// clients of servers that never learned the Responses API. The same Reply
// scripts both: reasoning summaries stream as delta.reasoning_content (as
// DeepSeek and vLLM send them), text as delta.content, calls as
// delta.tool_calls, then a chunk with finish_reason, a usage chunk when
// stream_options.include_usage asks for it, and data: [DONE]. Failed sends
// an error chunk instead of the finish; NoCompleted leaves out the finish,
// the usage and [DONE].

// chatBody is the part of a Chat Completions request the mock reads.
type chatBody struct {
	Model           string           `json:"model"`
	Messages        []map[string]any `json:"messages"`
	Tools           []map[string]any `json:"tools"`
	Stream          bool             `json:"stream"`
	ReasoningEffort string           `json:"reasoning_effort"`
	StreamOptions   struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return
	}
	req, params, perr := parseChat(body, r.Header.Get("Authorization"))
	s.serve(w, r, req, params, perr)
}

func parseChat(body []byte, auth string) (Request, map[string]any, *apiError) {
	req := Request{Raw: json.RawMessage(body), Authorization: auth, API: "chat"}
	var cb chatBody
	if err := json.Unmarshal(body, &cb); err != nil {
		return req, nil, badRequest("", "We could not parse the JSON body of your request. (%v)", err)
	}
	var params map[string]any
	_ = json.Unmarshal(body, &params)
	req.Model, req.Stream, req.Messages = cb.Model, cb.Stream, cb.Messages
	if cb.ReasoningEffort != "" {
		req.Reasoning = map[string]any{"effort": cb.ReasoningEffort}
	}
	for _, t := range cb.Tools {
		if fn, ok := t["function"].(map[string]any); ok {
			req.Tools = append(req.Tools, fn) // name, description, parameters: as Responses tools hold them
		}
	}
	for i, m := range cb.Messages {
		switch m["role"] {
		case "system", "developer":
			if i == 0 {
				req.Instructions = contentText(m["content"])
				continue
			}
			req.Input = append(req.Input, map[string]any{"type": "message", "role": "developer", "content": chatContent(m["content"])})
		case "user":
			req.Input = append(req.Input, map[string]any{"type": "message", "role": "user", "content": chatContent(m["content"])})
		case "assistant":
			if text := contentText(m["content"]); text != "" {
				req.Input = append(req.Input, map[string]any{"type": "message", "role": "assistant", "content": text})
			}
			if r, _ := m["refusal"].(string); r != "" {
				req.Input = append(req.Input, map[string]any{"type": "message", "role": "assistant",
					"content": []any{map[string]any{"type": "refusal", "refusal": r}}})
			}
			calls, _ := m["tool_calls"].([]any)
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				fn, _ := cm["function"].(map[string]any)
				req.Input = append(req.Input, map[string]any{"type": "function_call", "call_id": cm["id"], "name": fn["name"], "arguments": fn["arguments"]})
			}
		case "tool":
			req.Input = append(req.Input, map[string]any{"type": "function_call_output", "call_id": m["tool_call_id"], "output": contentText(m["content"])})
		default:
			return req, params, badRequest("messages", "Invalid value for 'messages[%d].role': %v.", i, m["role"])
		}
	}
	if req.Model == "" {
		return req, params, badRequest("model", "Missing required parameter: 'model'.")
	}
	if len(cb.Messages) == 0 {
		return req, params, badRequest("messages", "Missing required parameter: 'messages'.")
	}
	return req, params, validateInput(req)
}

// chatContent is message content in the Responses shapes: a string stays,
// parts become input_text and input_image parts.
func chatContent(v any) any {
	parts, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		m, _ := p.(map[string]any)
		switch m["type"] {
		case "text":
			out = append(out, map[string]any{"type": "input_text", "text": m["text"]})
		case "image_url":
			iu, _ := m["image_url"].(map[string]any)
			out = append(out, map[string]any{"type": "input_image", "image_url": iu["url"]})
		default:
			out = append(out, m)
		}
	}
	return out
}

// chatDone is the event that ends a Chat Completions stream.
const chatDone = "[DONE]"

func buildChatPlan(req Request, params map[string]any, rep Reply) plan {
	id, created := newID("chatcmpl"), time.Now().Unix()
	var p plan
	chunk := func(delta map[string]any, finish any) {
		p.events = append(p.events, event{data: map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	outChars := 0
	for _, rs := range rep.Reasoning {
		for _, text := range rs.Summary {
			for _, d := range SplitText(text, 2) {
				chunk(map[string]any{"reasoning_content": d}, nil)
			}
			outChars += len(text)
		}
	}
	text := ""
	for i, d := range rep.Text {
		if i == 0 {
			p.holdAt = len(p.events)
		}
		chunk(map[string]any{"content": d}, nil)
		text += d
	}
	outChars += len(text)
	refusal := strings.Join(rep.Refusal, "")
	for _, d := range rep.Refusal {
		chunk(map[string]any{"refusal": d}, nil)
	}
	outChars += len(refusal)
	var calls []any
	for i, c := range rep.Calls {
		callID, args := c.ID, c.Arguments
		if callID == "" {
			callID = newID("call")
		}
		if args == "" {
			args = "{}"
		}
		outChars += len(c.Name) + len(args)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": callID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, d := range SplitText(args, 3) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": d}}}}, nil)
		}
		calls = append(calls, map[string]any{"id": callID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": args}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	u := usageObject(rep.Usage, len(req.Raw), outChars)
	var usage map[string]any
	if u != nil {
		usage = map[string]any{"prompt_tokens": u["input_tokens"], "completion_tokens": u["output_tokens"], "total_tokens": u["total_tokens"],
			"prompt_tokens_details": map[string]any{"cached_tokens": u["input_tokens_details"].(map[string]any)["cached_tokens"]}}
	}
	msg := map[string]any{"role": "assistant", "content": text}
	if refusal != "" {
		msg["refusal"] = refusal
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	p.final = map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage}
	if rep.NoCompleted {
		return p
	}
	if rep.Failed != "" {
		p.events = append(p.events, event{data: map[string]any{"error": map[string]any{"message": rep.Failed, "type": "server_error"}}})
		return p
	}
	chunk(map[string]any{}, finish)
	if so, _ := params["stream_options"].(map[string]any); so["include_usage"] == true && usage != nil {
		p.events = append(p.events, event{data: map[string]any{"id": id, "object": "chat.completion.chunk", "created": created,
			"model": req.Model, "choices": []any{}, "usage": usage}})
	}
	p.events = append(p.events, event{typ: chatDone})
	return p
}

// writeChatEvent writes one Chat Completions SSE frame: "data: <json>" (no
// event line), or the closing "data: [DONE]".
func writeChatEvent(w io.Writer, ev event) error {
	var b bytes.Buffer
	b.WriteString("data: ")
	if ev.typ == chatDone {
		b.WriteString(chatDone)
	} else {
		data, err := json.Marshal(ev.data)
		if err != nil {
			return err
		}
		b.Write(data)
	}
	b.WriteString("\n\n")
	_, err := w.Write(b.Bytes())
	return err
}
