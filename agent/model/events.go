package model

import (
	"encoding/json"

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

// leanEvent is the few fields of the events that come once per streamed
// token. Decoding them into openai-go's full event union (a hundred-odd
// fields, through reflection, for every delta) was most of kin's CPU per
// delta; every other event is rare and goes through the union.
type leanEvent struct {
	Type         string `json:"type"`
	Delta        string `json:"delta"`
	SummaryIndex int64  `json:"summary_index"`
}

// leanTypes are the events decoded as leanEvent.
func leanType(t string) bool {
	switch t {
	case "response.output_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_part.added":
		return true
	}
	return false
}

// UnmarshalJSON decodes a delta event's two fields directly, and any other
// event (or a delta event whose fields do not have the types the lean
// decoding expects: the union is the judge of those) through openai-go's
// event union, so each reads as it did when every event went through the
// union. Data that is not JSON never gets here: encoding/json checks it
// first, and the stream ends with its syntax error.
func (e *streamEvent) UnmarshalJSON(data []byte) error {
	var l leanEvent
	if json.Unmarshal(data, &l) == nil && leanType(l.Type) {
		*e = streamEvent{Type: l.Type, Delta: l.Delta, SummaryIndex: l.SummaryIndex}
		return nil
	}
	var u responses.ResponseStreamEventUnion
	if err := json.Unmarshal(data, &u); err != nil {
		return err
	}
	*e = fromUnion(u)
	return nil
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
