package model

import (
	"encoding/json"
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
	// Delta is the piece of a response.output_text.delta and a
	// response.reasoning_summary_text.delta.
	Delta string
	// SummaryIndex is a response.reasoning_summary_part.added's part.
	SummaryIndex int64
	// Item is a response.output_item.done's item.
	Item outputItem
	// Usage is a response.completed's usage.
	Usage Usage
	// Status and Failure are a response.failed's or response.incomplete's
	// response status and error message.
	Status  string
	Failure string
	// Message is an error event's message.
	Message string
}

// outputItem is the part of a finished output item kin keeps: a function
// call, or a reasoning item.
type outputItem struct {
	Type      string
	ID        string
	CallID    string
	Name      string
	Arguments string
	Encrypted string
	Summary   []string
}

// UnmarshalJSON reads the events that come once per streamed token (text
// and reasoning-summary deltas, summary parts) directly, and every other
// event through openai-go's full event union, as the client read every
// event before. Decoding each delta into the union (a hundred-odd fields,
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
	if err := json.Unmarshal(data, &u); err != nil {
		return err
	}
	*e = fromUnion(u)
	return nil
}

// leanTypes are the event types readLean reads, as constants (the event's
// own bytes are not kept).
var leanTypes = []string{"response.output_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_part.added"}

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
		return e, false
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

// fromUnion is the streamEvent of an event decoded into openai-go's union:
// for each type, the fields the client reads, as it read them.
func fromUnion(u responses.ResponseStreamEventUnion) streamEvent {
	e := streamEvent{Type: u.Type}
	switch u.Type {
	case "response.output_text.delta", "response.reasoning_summary_text.delta":
		e.Delta = u.Delta
	case "response.reasoning_summary_part.added":
		e.SummaryIndex = u.SummaryIndex
	case "response.output_item.done":
		it := u.Item
		e.Item = outputItem{Type: it.Type, ID: it.ID, CallID: it.CallID, Name: it.Name, Arguments: it.Arguments.OfString, Encrypted: it.EncryptedContent}
		for _, s := range it.Summary {
			e.Item.Summary = append(e.Item.Summary, s.Text)
		}
	case "response.completed":
		e.Usage = Usage{InputTokens: u.Response.Usage.InputTokens, OutputTokens: u.Response.Usage.OutputTokens}
	case "response.failed", "response.incomplete":
		e.Status, e.Failure = string(u.Response.Status), u.Response.Error.Message
	case "error":
		e.Message = u.Message
	}
	return e
}
