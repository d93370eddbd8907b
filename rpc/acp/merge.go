package acp

import (
	"bytes"
	"encoding/json"

	"github.com/kin-dev/kin/rpc"
)

// Streamed chunks join while they wait (see rpc.ObjectStream). A client
// that stops reading during a turn would otherwise have kin hold every
// session/update chunk with its whole envelope, over a hundred bytes for a
// piece of a few. ACP clients concatenate consecutive chunks of a message
// (the protocol streams a message as chunks of it), so two waiting chunks
// of one session, one kind and one message read as one with both texts:
// only an agent message's or thought's text chunks are joined, only those
// that are next to each other and not yet written, never across another
// update (a tool call between two chunks keeps its place and splits them).

// chunkPrefix starts every session/update kin encodes (jsonrpc2 writes a
// notification's members in this order, and SessionNotification's
// sessionId before its update).
var chunkPrefix = []byte(`{"jsonrpc":"2.0","method":"` + NotifySessionUpdate + `","params":{"sessionId":`)

// chunkText is what comes right before the text of a text chunk of the
// kinds that are joined, as ContentChunk encodes it. A quote right after
// '{' or ':' is never inside a JSON string (there it is escaped), so the
// first match is the update's own.
var chunkText = [][]byte{
	[]byte(`,"update":{"sessionUpdate":"` + UpdateAgentMessage + `","content":{"type":"text","text":`),
	[]byte(`,"update":{"sessionUpdate":"` + UpdateAgentThought + `","content":{"type":"text","text":`),
}

// messageChunk is the ObjectStream's merge func for kin acp: the stream of
// a chunk is its notification without its text (session, kind, message
// id: every byte but the text's must be equal).
func messageChunk(data []byte) (rpc.Delta, bool) {
	if !bytes.HasPrefix(data, chunkPrefix) {
		return rpc.Delta{}, false
	}
	start := -1
	for _, marker := range chunkText {
		if i := bytes.Index(data, marker); i >= 0 {
			start = i + len(marker)
			break
		}
	}
	if start < 0 {
		return rpc.Delta{}, false
	}
	end := stringEnd(data, start)
	// The content block holds the text alone: an annotated block, or one
	// with any other member, is not joined.
	if end < 0 || end >= len(data) || data[end] != '}' {
		return rpc.Delta{}, false
	}
	var text string
	if json.Unmarshal(data[start:end], &text) != nil || text == "" {
		return rpc.Delta{}, false
	}
	head, tail := data[:start], data[end:]
	join := func(text string) []byte {
		q, _ := json.Marshal(text) // escaped as the pieces were (encoding/json)
		out := make([]byte, 0, len(head)+len(q)+len(tail))
		return append(append(append(out, head...), q...), tail...)
	}
	return rpc.Delta{Stream: string(head) + "\x00" + string(tail), Text: text, Join: join}, true
}

// stringEnd returns where the JSON string starting at data[start] ends
// (just after its closing quote), or -1.
func stringEnd(data []byte, start int) int {
	if start >= len(data) || data[start] != '"' {
		return -1
	}
	esc := false
	for i := start + 1; i < len(data); i++ {
		switch c := data[i]; {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			return i + 1
		}
	}
	return -1
}
