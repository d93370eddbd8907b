package model

import (
	"bytes"
	"encoding/json"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"
)

// joinedEvents is openai-go's SSE decoder with two repairs, and a note of
// how the stream ended. The SSE framing stays the SDK's.
//
// Two events a server wrote without the blank line between them ("data:
// {...}\ndata: {...}", as Baseten's GLM endpoint streams tool calls:
// anomalyco/opencode issue 27365 and the issues it lists) reach the SDK as
// one event whose data is both JSON values on two lines, which no JSON
// decoder takes: the whole answer failed as "an event that is not valid
// JSON". Such an event is handed on as the events it joins; an event whose
// data lines make one JSON value (a server may split one across data
// lines) is never split. The other repair is withoutNullError's.
type joinedEvents struct {
	ssestream.Decoder
	cur  ssestream.Event
	rest []ssestream.Event
	// done says the server ended the stream with its [DONE] event, not
	// by closing it (see endedWithDone).
	done bool
}

// splitJoined is dec with joined events handed on one by one (nil stays
// nil: the request failed).
func splitJoined(dec ssestream.Decoder) ssestream.Decoder {
	if dec == nil {
		return nil
	}
	return &joinedEvents{Decoder: dec}
}

func (d *joinedEvents) Next() bool {
	switch {
	case len(d.rest) > 0:
		d.cur, d.rest = d.rest[0], d.rest[1:]
	case !d.Decoder.Next():
		return false
	default:
		d.cur = d.Decoder.Event()
		if parts := joined(d.cur); len(parts) > 1 {
			d.cur, d.rest = parts[0], parts[1:]
		}
	}
	// The SDK's stream ends at an event that starts so.
	d.done = d.done || bytes.HasPrefix(d.cur.Data, []byte("[DONE]"))
	d.cur.Data = withoutNullError(d.cur.Data)
	return true
}

// withoutNullError is an event's data without a top-level "error": null.
// openai-go ends a stream with an error at any event with a top-level
// "error" key, null or not; Microsoft's Foundry Local puts "error":null in
// every chunk (microsoft/foundry-local issues 144 and 221: the Go SDK
// "fails processing the result"), so every answer failed at its first
// piece, as "received error while streaming: " with no error in it. An
// "error" that holds anything is left for the SDK, which reports it.
func withoutNullError(data []byte) []byte {
	if !bytes.Contains(data, []byte(`"error"`)) {
		return data
	}
	var key, val gjson.Result
	gjson.ParseBytes(data).ForEach(func(k, v gjson.Result) bool {
		if k.Str != "error" {
			return true
		}
		key, val = k, v // the first, as the SDK's look-up finds it
		return false
	})
	if val.Type != gjson.Null || val.Raw != "null" || key.Index <= 0 || val.Index <= key.Index {
		return data
	}
	start, end := key.Index, val.Index+len(val.Raw)
	// The comma that went with the pair: the one after it, else the one
	// before it.
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 && rest[0] == ',' {
		end = len(data) - len(rest) + 1
	} else if head := bytes.TrimRight(data[:start], " \t\r\n"); len(head) > 0 && head[len(head)-1] == ',' {
		start = len(head) - 1
	}
	out := append(bytes.Clone(data[:start]), data[end:]...)
	if !json.Valid(out) {
		return data
	}
	return out
}

// endedWithDone reports whether the stream dec decoded ended with the
// server's [DONE] event.
func endedWithDone(dec ssestream.Decoder) bool {
	j, ok := dec.(*joinedEvents)
	return ok && j.done
}

func (d *joinedEvents) Event() ssestream.Event { return d.cur }

// joined is the events an event's data joins, one a data line, when it has
// more than one line, is not one JSON value, and each line is one (or
// [DONE]); nil otherwise. Only an event of several lines is looked at, so
// the usual one-line event costs one byte search.
func joined(ev ssestream.Event) []ssestream.Event {
	data := bytes.TrimSuffix(ev.Data, []byte("\n")) // the decoder ends every data line so
	if bytes.IndexByte(data, '\n') < 0 || json.Valid(data) {
		return nil
	}
	lines := bytes.Split(data, []byte("\n"))
	out := make([]ssestream.Event, 0, len(lines))
	for _, l := range lines {
		if !json.Valid(l) && !bytes.Equal(bytes.TrimSpace(l), []byte("[DONE]")) {
			return nil
		}
		out = append(out, ssestream.Event{Type: ev.Type, Data: append(bytes.Clone(l), '\n')})
	}
	return out
}
