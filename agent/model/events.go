package model

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/openai/openai-go/v3/responses"
)

// streamEvent is one server-sent event of a Responses stream as kin acts
// on it: its type and, per type, the fields the client reads. openai-go's
// SSE stream frames the events (and ends the stream on [DONE] and on an
// event carrying "error"); only the decoding of each event's data is kin's.
type streamEvent struct {
	Type string
	// Delta is the piece of a response.output_text.delta, a
	// response.refusal.delta, a response.reasoning_summary_text.delta and a
	// response.reasoning_text.delta.
	Delta string
	// SummaryIndex is a response.reasoning_summary_part.added's part.
	SummaryIndex int64
	// Item is a response.output_item.added's or .done's item.
	Item outputItem
	// Usage is a response.completed's, .incomplete's or .failed's usage.
	Usage Usage
	// Output is a response.completed's or .incomplete's output items (a
	// service may send an answer only there).
	Output []outputItem
	// Status and Failure are a response.failed's or response.incomplete's
	// response status and error message; Reason is an incomplete
	// response's incomplete_details.reason.
	Status  string
	Failure string
	Reason  string
	// Message is an error event's message.
	Message string
}

// outputItem is the part of an output item kin keeps: a message (its text,
// refusal and phase), a function call, or a reasoning item.
type outputItem struct {
	Type      string
	ID        string
	CallID    string
	Name      string
	Arguments string
	Encrypted string
	Summary   []string
	// Phase is a message's phase (commentary, final_answer).
	Phase string
	// Text and Refusal are a message's output_text and refusal parts,
	// joined; Reasoning is a reasoning item's reasoning_text parts (open
	// servers show the reasoning itself), joined.
	Text      string
	Refusal   string
	Reasoning string
}

// UnmarshalJSON reads the events that come once per streamed token (text
// and reasoning-summary deltas, summary parts) and the events the client
// reads only the type of (unionReads) directly, and every other event
// through openai-go's full event union, as the client read every event
// before. Decoding each delta into the union (a hundred-odd fields,
// through reflection) was most of kin's CPU per delta.
//
// The direct reading follows the union's own decoder (openai-go's apijson,
// which reads with gjson): keys match exactly, strings are unescaped by
// gjson. An event it is not sure of goes to the union, which is the judge:
// a key seen twice, or a field of another JSON type than the API's (a
// number for a delta, say; apijson converts some of those). Data that is
// not JSON never gets here: encoding/json checks it first, and the stream
// ends with its syntax error.
func (e *streamEvent) UnmarshalJSON(data []byte) error {
	if lean, ok := readLean(data); ok {
		*e = lean
		return nil
	}
	var u responses.ResponseStreamEventUnion
	if err := json.Unmarshal(responseOnly(data), &u); err != nil {
		return err
	}
	*e = fromUnion(u)
	return nil
}

// responseKeys are the keys of an event's response object that fromUnion
// reads.
var responseKeys = []string{"output", "usage", "status", "error", "incomplete_details"}

// responseOnly is the data of a response.completed, .failed or .incomplete
// event with its response object cut to responseKeys: the rest echoes the
// request (the prompt, every tool definition), which the union would
// decode, field by field through reflection, only for fromUnion to pass
// it by. Any other event, and one with a key twice (the union decides
// which counts), is returned as it is.
func responseOnly(data []byte) []byte {
	root := gjson.ParseBytes(data)
	var typ, resp gjson.Result
	twice := false
	root.ForEach(func(key, value gjson.Result) bool {
		slot := map[string]*gjson.Result{"type": &typ, "response": &resp}[key.Str]
		if slot == nil {
			return true
		}
		if slot.Exists() {
			twice = true
			return false
		}
		*slot = value
		return true
	})
	switch {
	case twice, typ.Type != gjson.String, !resp.IsObject():
		return data
	case typ.Str != "response.completed" && typ.Str != "response.failed" && typ.Str != "response.incomplete":
		return data
	}
	kept := map[string]json.RawMessage{}
	resp.ForEach(func(key, value gjson.Result) bool {
		if !slices.Contains(responseKeys, key.Str) {
			return true
		}
		if _, dup := kept[key.Str]; dup {
			twice = true
			return false
		}
		kept[key.Str] = json.RawMessage(value.Raw)
		return true
	})
	if twice {
		return data
	}
	out, err := json.Marshal(map[string]any{"type": typ.Str, "response": kept})
	if err != nil {
		return data
	}
	return out
}

// leanTypes are the event types readLean reads, as constants (the event's
// own bytes are not kept).
var leanTypes = []string{"response.output_text.delta", "response.refusal.delta", "response.reasoning_summary_text.delta",
	"response.reasoning_text.delta", "response.reasoning_summary_part.added"}

// readLean reads an event of one of leanTypes; ok is false for any other
// event, and for one readLean is not sure of.
func readLean(data []byte) (e streamEvent, ok bool) {
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return e, false
	}
	var typ, delta, index gjson.Result
	ok = true
	root.ForEach(func(key, value gjson.Result) bool {
		var slot *gjson.Result
		switch key.Str {
		case "type":
			slot = &typ
		case "delta":
			slot = &delta
		case "summary_index":
			slot = &index
		default:
			return true
		}
		if slot.Exists() {
			ok = false // a key twice: the union decides which one counts
			return false
		}
		*slot = value
		return true
	})
	if !ok || typ.Type != gjson.String {
		return e, false
	}
	for _, t := range leanTypes {
		if typ.Str == t {
			e.Type = t
		}
	}
	switch e.Type {
	case "":
		if unionReads(typ.Str) {
			return e, false
		}
		// An event the client reads only the type of (response.created
		// and response.in_progress echo the whole request's settings,
		// the prompt and every tool definition: decoding them into the
		// union, three times a turn, was half of what a warm text turn
		// allocated): the union would give nothing more.
		e.Type = strings.Clone(typ.Str)
	case "response.reasoning_summary_part.added":
		if index.Exists() && index.Type != gjson.Null {
			n, err := strconv.ParseInt(index.Raw, 10, 64)
			if index.Type != gjson.Number || err != nil {
				return e, false
			}
			e.SummaryIndex = n
		}
	default:
		if delta.Exists() && delta.Type != gjson.Null {
			if delta.Type != gjson.String {
				return e, false
			}
			e.Delta = strings.Clone(delta.Str) // not a view of the whole event
		}
	}
	return e, true
}

// unionReads reports whether fromUnion reads more than the type of an
// event of type t.
func unionReads(t string) bool {
	switch t {
	case "response.output_item.added", "response.output_item.done", "response.completed",
		"response.failed", "response.incomplete", "error":
		return true
	}
	return slices.Contains(leanTypes, t)
}

// fromUnion is the streamEvent of an event decoded into openai-go's union:
// for each type, the fields the client reads, as it read them.
func fromUnion(u responses.ResponseStreamEventUnion) streamEvent {
	e := streamEvent{Type: u.Type}
	switch u.Type {
	case "response.output_text.delta", "response.refusal.delta", "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		e.Delta = u.Delta
	case "response.reasoning_summary_part.added":
		e.SummaryIndex = u.SummaryIndex
	case "response.output_item.added", "response.output_item.done":
		e.Item = itemOf(u.Item)
	case "response.completed":
		e.Usage = usageOf(u.Response.Usage)
		e.Output = outputOf(u.Response.Output)
	case "response.failed", "response.incomplete":
		e.Status, e.Failure = string(u.Response.Status), u.Response.Error.Message
		e.Reason = u.Response.IncompleteDetails.Reason
		e.Usage = usageOf(u.Response.Usage)
		e.Output = outputOf(u.Response.Output)
	case "error":
		e.Message = u.Message
	}
	return e
}

func usageOf(u responses.ResponseUsage) Usage {
	return counted(Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.InputTokensDetails.CachedTokens})
}

func outputOf(items []responses.ResponseOutputItemUnion) []outputItem {
	var out []outputItem
	for _, it := range items {
		out = append(out, itemOf(it))
	}
	return out
}

func itemOf(it responses.ResponseOutputItemUnion) outputItem {
	o := outputItem{Type: it.Type, ID: it.ID, CallID: it.CallID, Name: it.Name, Arguments: it.Arguments.OfString,
		Encrypted: it.EncryptedContent, Phase: string(it.Phase)}
	for _, s := range it.Summary {
		o.Summary = append(o.Summary, s.Text)
	}
	for _, c := range it.Content {
		switch c.Type {
		case "output_text":
			o.Text += c.Text
		case "refusal":
			o.Refusal += c.Refusal
		case "reasoning_text":
			o.Reasoning += c.Text
		}
	}
	return o
}
