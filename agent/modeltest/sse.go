package modeltest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// event is one server-sent event; data excludes type and sequence_number,
// which are added when it is written. An event without a type is a Chat
// Completions chunk.
type event struct {
	typ  string
	data map[string]any
}

// plan is the scripted response to one request, built before sending.
type plan struct {
	events []event        // the stream, including the terminal event unless omitted
	holdAt int            // index of the event after which Hold blocks
	final  map[string]any // the terminal response object (non-streaming answer)
}

// buildPlan turns a Reply into the Responses API event sequence.
func buildPlan(req Request, params map[string]any, rep Reply) plan {
	base := responseObject(req, params)
	snapshot := func(status string, output []any, usage, errObj any) map[string]any {
		r := make(map[string]any, len(base)+5)
		for k, v := range base {
			r[k] = v
		}
		r["status"], r["output"], r["usage"], r["error"] = status, output, usage, errObj
		if status == "completed" {
			r["completed_at"] = time.Now().Unix()
		}
		return r
	}

	var p plan
	add := func(typ string, data map[string]any) { p.events = append(p.events, event{typ, data}) }
	add("response.created", map[string]any{"response": snapshot("in_progress", []any{}, nil, nil)})
	add("response.in_progress", map[string]any{"response": snapshot("in_progress", []any{}, nil, nil)})

	var output []any
	outChars := 0
	encrypted := false
	for _, inc := range req.Include {
		encrypted = encrypted || inc == "reasoning.encrypted_content"
	}
	for _, rs := range rep.Reasoning {
		oi, id := len(output), newID("rs")
		summary := []any{}
		add("response.output_item.added", map[string]any{"output_index": oi, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
		for j, text := range rs.Summary {
			part := func(s string) map[string]any { return map[string]any{"type": "summary_text", "text": s} }
			at := map[string]any{"item_id": id, "output_index": oi, "summary_index": j}
			with := func(k string, v any) map[string]any {
				m := map[string]any{k: v}
				for kk, vv := range at {
					m[kk] = vv
				}
				return m
			}
			add("response.reasoning_summary_part.added", with("part", part("")))
			for _, d := range SplitText(text, 2) {
				add("response.reasoning_summary_text.delta", with("delta", d))
			}
			add("response.reasoning_summary_text.done", with("text", text))
			add("response.reasoning_summary_part.done", with("part", part(text)))
			summary = append(summary, part(text))
			outChars += len(text)
		}
		done := map[string]any{"id": id, "type": "reasoning", "summary": summary}
		if encrypted {
			enc := rs.Encrypted
			if enc == "" {
				enc = newID("gAAAAA")
			}
			done["encrypted_content"] = enc
		}
		add("response.output_item.done", map[string]any{"output_index": oi, "item": done})
		output = append(output, done)
	}
	if len(rep.Text) > 0 {
		oi, id := len(output), newID("msg")
		text := strings.Join(rep.Text, "") // not +=: a long answer would cost quadratic time
		outChars += len(text)
		part := func(s string) map[string]any {
			return map[string]any{"type": "output_text", "text": s, "annotations": []any{}, "logprobs": []any{}}
		}
		item := func(status string, content []any) map[string]any {
			return map[string]any{"id": id, "type": "message", "status": status, "role": "assistant", "content": content}
		}
		add("response.output_item.added", map[string]any{"output_index": oi, "item": item("in_progress", []any{})})
		add("response.content_part.added", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": part("")})
		p.holdAt = len(p.events)
		for _, d := range rep.Text {
			add("response.output_text.delta", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "delta": d, "logprobs": []any{}})
		}
		add("response.output_text.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "text": text, "logprobs": []any{}})
		add("response.content_part.done", map[string]any{"item_id": id, "output_index": oi, "content_index": 0, "part": part(text)})
		done := item("completed", []any{part(text)})
		add("response.output_item.done", map[string]any{"output_index": oi, "item": done})
		output = append(output, done)
	}
	if len(rep.Refusal) > 0 {
		oi, id := len(output), newID("msg")
		refusal := strings.Join(rep.Refusal, "")
		outChars += len(refusal)
		part := func(s string) map[string]any { return map[string]any{"type": "refusal", "refusal": s} }
		item := func(status string, content []any) map[string]any {
			return map[string]any{"id": id, "type": "message", "status": status, "role": "assistant", "content": content}
		}
		at := func(k string, v any) map[string]any {
			return map[string]any{"item_id": id, "output_index": oi, "content_index": 0, k: v}
		}
		add("response.output_item.added", map[string]any{"output_index": oi, "item": item("in_progress", []any{})})
		add("response.content_part.added", at("part", part("")))
		for _, d := range rep.Refusal {
			add("response.refusal.delta", at("delta", d))
		}
		add("response.refusal.done", at("refusal", refusal))
		add("response.content_part.done", at("part", part(refusal)))
		done := item("completed", []any{part(refusal)})
		add("response.output_item.done", map[string]any{"output_index": oi, "item": done})
		output = append(output, done)
	}
	for _, c := range rep.Calls {
		oi, id := len(output), newID("fc")
		callID, args := c.ID, c.Arguments
		if callID == "" {
			callID = newID("call")
		}
		if args == "" {
			args = "{}"
		}
		outChars += len(c.Name) + len(args)
		item := func(status, args string) map[string]any {
			return map[string]any{"id": id, "type": "function_call", "status": status, "arguments": args, "call_id": callID, "name": c.Name}
		}
		add("response.output_item.added", map[string]any{"output_index": oi, "item": item("in_progress", "")})
		for _, d := range SplitText(args, 3) {
			add("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": oi, "delta": d})
		}
		add("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": oi, "arguments": args})
		done := item("completed", args)
		add("response.output_item.done", map[string]any{"output_index": oi, "item": done})
		output = append(output, done)
	}
	if output == nil {
		output = []any{}
	}

	usage := usageObject(rep.Usage, len(req.Raw), outChars)
	if rep.Failed != "" {
		errObj := map[string]any{"code": "server_error", "message": rep.Failed}
		p.final = snapshot("failed", output, usage, errObj)
		add("response.failed", map[string]any{"response": p.final})
	} else {
		p.final = snapshot("completed", output, usage, nil)
		add("response.completed", map[string]any{"response": p.final})
	}
	if rep.NoCompleted {
		p.events = p.events[:len(p.events)-1]
	}
	return p
}

// responseObject returns the fields of a Response object that do not change
// during a stream, echoing request settings the way the API does.
func responseObject(req Request, params map[string]any) map[string]any {
	param := func(key string, def any) any {
		if v, ok := params[key]; ok && v != nil {
			return v
		}
		return def
	}
	tools := make([]any, 0, len(req.Tools))
	for _, t := range req.Tools {
		if t["type"] != "function" {
			tools = append(tools, t)
			continue
		}
		ft := map[string]any{"description": nil, "parameters": nil, "strict": true}
		for k, v := range t {
			ft[k] = v
		}
		tools = append(tools, ft)
	}
	return map[string]any{
		"id":                   newID("resp"),
		"object":               "response",
		"created_at":           time.Now().Unix(),
		"access_programs":      map[string]any{"cyber": "standard"},
		"background":           false,
		"completed_at":         nil,
		"error":                nil,
		"incomplete_details":   nil,
		"instructions":         param("instructions", nil),
		"max_output_tokens":    param("max_output_tokens", nil),
		"max_tool_calls":       param("max_tool_calls", nil),
		"metadata":             param("metadata", map[string]any{}),
		"model":                req.Model,
		"parallel_tool_calls":  param("parallel_tool_calls", true),
		"previous_response_id": param("previous_response_id", nil),
		"prompt_cache_key":     param("prompt_cache_key", nil),
		"reasoning":            param("reasoning", map[string]any{"effort": nil, "summary": nil}),
		"safety_identifier":    nil,
		"service_tier":         "default",
		"store":                param("store", true),
		"temperature":          param("temperature", 1.0),
		"text":                 param("text", map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"}),
		"tool_choice":          param("tool_choice", "auto"),
		"tools":                tools,
		"top_logprobs":         param("top_logprobs", 0),
		"top_p":                param("top_p", 1.0),
		"truncation":           param("truncation", "disabled"),
		"usage":                nil,
		"user":                 nil,
	}
}

// usageObject builds the usage block, estimating zero counts at about four
// bytes per token.
func usageObject(u Usage, inBytes, outBytes int) map[string]any {
	if u.None {
		return nil
	}
	in, out := u.Input, u.Output
	if in == 0 {
		in = max(1, inBytes/4)
	}
	if out == 0 {
		out = max(1, outBytes/4)
	}
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": min(u.Cached, in), "cache_write_tokens": 0},
		"output_tokens":         out,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          in + out,
	}
}

// writeEvent writes one SSE frame: "event: <type>\ndata: <json>\n\n", with
// type and sequence_number leading the JSON object as the API sends them.
func writeEvent(w io.Writer, ev event, seq int) error {
	if ev.typ == "" || ev.typ == chatDone {
		return writeChatEvent(w, ev)
	}
	rest, err := json.Marshal(ev.data)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,\"sequence_number\":%d", ev.typ, ev.typ, seq)
	if len(rest) > 2 {
		b.WriteByte(',')
		b.Write(rest[1:])
	} else {
		b.WriteByte('}')
	}
	b.WriteString("\n\n")
	_, err = w.Write(b.Bytes())
	return err
}

// writeFault writes the malformed events a reply asks for: data that is not
// JSON, or a data line longer than a client may read.
func writeFault(w io.Writer, rep Reply) error {
	if rep.BadJSON {
		if _, err := io.WriteString(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n"); err != nil {
			return err
		}
	}
	if rep.LongLine > 0 {
		line := make([]byte, 0, rep.LongLine+len("data: \n\n"))
		line = append(line, "data: "...)
		line = append(line, bytes.Repeat([]byte("x"), max(rep.LongLine-len("data: "), 0))...)
		line = append(line, "\n\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// SplitText splits s into at most n pieces of about equal length, on rune
// boundaries. It returns nil for "" and s alone when s is too short to split.
func SplitText(s string, n int) []string {
	r := []rune(s)
	if len(r) == 0 {
		return nil
	}
	n = min(max(n, 1), len(r))
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

// newID returns a fresh OpenAI-style identifier such as "resp_…".
func newID(prefix string) string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}
