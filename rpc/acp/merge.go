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
// A running call's output update, whose content replaces the card's, is
// replaced the same way by the next one of its call (runningOutput).

// chunkPrefix starts every session/update kin encodes (jsonrpc2 writes a
// notification's members in this order, and SessionNotification's
// sessionId before its update).
var chunkPrefix = []byte(`{"jsonrpc":"2.0","method":"` + NotifySessionUpdate + `","params":{"sessionId":`)

// chunkText is what comes right before the text of a text chunk of the
// kinds that are joined, as ContentChunk encodes it, right after the
// session id (updateAt).
var chunkText = [][]byte{
	[]byte(`,"update":{"sessionUpdate":"` + UpdateAgentMessage + `","content":{"type":"text","text":`),
	[]byte(`,"update":{"sessionUpdate":"` + UpdateAgentThought + `","content":{"type":"text","text":`),
}

// streamed is the ObjectStream's merge func for kin acp: a message chunk,
// or a running call's output. It runs on every notification that has to
// wait: what an update is, is read from its first bytes (updateAt), and
// only a running call's output is decoded. A notification of any other
// kind, however long, costs a look at its session id.
func streamed(data []byte) (rpc.Delta, bool) {
	if d, ok := messageChunk(data); ok {
		return d, true
	}
	return runningOutput(data)
}

// updateAt is where the update of a session/update kin encodes starts:
// right after its session id (chunkPrefix), or -1 for any other message.
func updateAt(data []byte) int {
	if !bytes.HasPrefix(data, chunkPrefix) {
		return -1
	}
	return stringEnd(data, len(chunkPrefix))
}

// outputUpdate is how a running call's output update starts (after its
// session id), and outputStatus what follows its toolCallId (ToolCall's
// members in order: no title or kind in between).
var (
	outputUpdate = []byte(`,"update":{"sessionUpdate":"` + UpdateToolCallUpdate + `","toolCallId":`)
	outputStatus = []byte(`,"status":"` + StatusInProgress + `","content":`)
)

// runningOutput recognises a running call's output (outputStream): a
// tool_call_update with the status in_progress whose content replaces the
// card's (ACP: "Replace the content collection"), and nothing else but
// its _meta. The next one of the same call makes a waiting one of no use:
// a client that stopped reading during a long command had kin hold 64 KB
// ten times a second. An update that says more (a title, locations, a
// status) is never dropped.
func runningOutput(data []byte) (rpc.Delta, bool) {
	at := updateAt(data)
	if at < 0 || !bytes.HasPrefix(data[at:], outputUpdate) {
		return rpc.Delta{}, false
	}
	// A completed update, or one with a title, is not decoded.
	if end := stringEnd(data, at+len(outputUpdate)); end < 0 || !bytes.HasPrefix(data[end:], outputStatus) {
		return rpc.Delta{}, false
	}
	var n struct {
		Params struct {
			SessionID string                     `json:"sessionId"`
			Update    map[string]json.RawMessage `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &n) != nil {
		return rpc.Delta{}, false
	}
	u := n.Params.Update
	if string(u["status"]) != `"`+StatusInProgress+`"` || u["content"] == nil || u["toolCallId"] == nil {
		return rpc.Delta{}, false
	}
	for k := range u {
		switch k {
		case "sessionUpdate", "toolCallId", "status", "content", "_meta":
		default:
			return rpc.Delta{}, false
		}
	}
	stream := "output\x00" + n.Params.SessionID + "\x00" + string(u["toolCallId"]) + "\x00" + string(u["_meta"])
	return rpc.Delta{Stream: stream, Replace: true}, true
}

// messageChunk recognises a message chunk: its stream is its notification
// without its text (session, kind, message id: every byte but the text's
// must be equal).
func messageChunk(data []byte) (rpc.Delta, bool) {
	at := updateAt(data)
	if at < 0 {
		return rpc.Delta{}, false
	}
	start := -1
	for _, marker := range chunkText {
		if bytes.HasPrefix(data[at:], marker) {
			start = at + len(marker)
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
