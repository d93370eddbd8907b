package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/kin-dev/kin/rpc"
)

// MaxLine is the longest message kin reads, as kin serve's MaxFrame. A
// longer line is answered with an error and skipped as it streams past,
// never buffered.
const MaxLine = rpc.MaxFrame

// lineFraming is ACP's framing: one JSON-RPC message per line, UTF-8, no
// embedded newlines. jsonrpc2's own line codec cannot recover from a line
// it cannot decode (its decoder keeps the broken input); through
// rpc.ObjectStream such a line is answered with a JSON-RPC error and reading
// goes on with the next line, so a client with a bug loses one message, not
// its session. Every message kin writes carries "jsonrpc":"2.0" (jsonrpc2
// adds it; the official SDK rejects a message without it), and every message
// read must carry it too.
//
// A request id jsonrpc2 cannot hold (it answered "id":-1 as
// 18446744073709551615 and refused 1.5) travels through it as an alias and
// is answered as the client wrote it, as in kin serve (rpc.AliasID).
type lineFraming struct {
	r *bufio.Reader
	// aliased is set once a request id was carried as an alias.
	aliased *atomic.Bool
}

func newStream(rwc io.ReadWriteCloser, onBad, onGone func(error)) *rpc.ObjectStream {
	return rpc.NewObjectStream(rwc, func(r *bufio.Reader) rpc.Framing { return lineFraming{r: r, aliased: new(atomic.Bool)} }, onBad, onGone, streamed)
}

// Frame implements rpc.Framing: the JSON on one line. encoding/json escapes
// control characters in strings, so a message never holds a raw newline.
func (f lineFraming) Frame(w *bufio.Writer, data []byte) {
	if f.aliased.Load() {
		data = rpc.UnaliasID(data)
	}
	w.Write(data)
	w.WriteByte('\n')
}

// Next implements rpc.Framing: the next line that is one JSON-RPC 2.0
// message (blank lines between messages are harmless).
func (f lineFraming) Next() ([]byte, json.RawMessage, error) {
	for {
		line, err := f.readLine()
		if err != nil {
			return nil, nil, err
		}
		if len(line) == 0 {
			continue
		}
		id, bad := check(line)
		if bad != nil {
			return nil, nil, bad
		}
		if aliased, ok := rpc.AliasID(line, id); ok {
			line = aliased
			f.aliased.Store(true)
		}
		return line, id, nil
	}
}

// envelope is what kin checks of every message before jsonrpc2 sees it.
type envelope struct {
	JSONRPC *string
	ID      json.RawMessage
	Method  *string
}

// readEnvelope reads a message's envelope as jsonrpc2 reads a request:
// through a map, so a member is named exactly (JSON-RPC's names are
// case-sensitive), a key spelt with escapes is the key it spells, and the
// last of a repeated member wins. encoding/json's struct fields match a
// name in any case: "ID" was taken for the id of what jsonrpc2 reads as a
// notification (kin aliased it, which gave the message an "id", and
// answered it), and {"id":-1,"ID":1} had its id read as 1, not aliased, and
// answered as 18446744073709551615.
func readEnvelope(line []byte) (envelope, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return envelope{}, err
	}
	e := envelope{ID: m["id"]}
	if err := member(m, "jsonrpc", &e.JSONRPC); err != nil {
		return envelope{}, err
	}
	if err := member(m, "method", &e.Method); err != nil {
		return envelope{}, err
	}
	return e, nil
}

// member reads the string member name of m into v: nil when it is absent
// or null, as a *string field reads it.
func member(m map[string]json.RawMessage, name string, v **string) error {
	raw, ok := m[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%q: %w", name, err)
	}
	return nil
}

// check refuses what is not one JSON-RPC 2.0 message: text that is not
// JSON (-32700, as the JSON-RPC spec says), a batch (ACP has none, and the
// SDK answers one the same way), anything but an object, or a message
// without "jsonrpc":"2.0". It returns the id to answer the message with,
// read in the same pass.
func check(line []byte) (json.RawMessage, *rpc.Skipped) {
	if !json.Valid(line) {
		return nil, &rpc.Skipped{Code: rpc.CodeParseError, Msg: "parse error: the line is not valid JSON"}
	}
	switch line[0] {
	case '[':
		return nil, &rpc.Skipped{Code: rpc.CodeInvalidRequest, Msg: "JSON-RPC batches are not supported"}
	case '{':
	default:
		return nil, &rpc.Skipped{Code: rpc.CodeInvalidRequest, Msg: "invalid request: a message is a JSON object"}
	}
	e, err := readEnvelope(line)
	if err != nil {
		return nil, &rpc.Skipped{Code: rpc.CodeInvalidRequest, Msg: "invalid request: " + err.Error()}
	}
	if e.JSONRPC == nil || *e.JSONRPC != "2.0" {
		return nil, &rpc.Skipped{Code: rpc.CodeInvalidRequest, Msg: `invalid request: "jsonrpc" must be "2.0"`, ID: answerable(e)}
	}
	if e.Method != nil && string(e.ID) == "null" {
		return nil, rpc.NullIDRequest()
	}
	return answerable(e), nil
}

// answerable is the id of a request: its own when it is a string or a
// number (rpc.UsableID), else nil. It is the id a refused message is
// answered with (null for anything else: a notification or response gets
// no answer of its own under JSON-RPC, but the client should still learn
// why), and the id carried through jsonrpc2 (an alias for one it cannot
// hold): an id of any other kind, carried as an alias, had a request with
// "id":true run and answered under it.
func answerable(e envelope) json.RawMessage {
	if e.Method == nil || !rpc.UsableID(e.ID) {
		return nil
	}
	return e.ID
}

// readLine returns the next line without its line end and surrounding
// blank space. A line over MaxLine is discarded as it streams past and
// reported as a *rpc.Skipped, with its request id when it has one (the
// client waits for that request's answer); the last line may end without
// a newline.
func (f lineFraming) readLine() ([]byte, error) {
	var line []byte
	// over is set once the line is over MaxLine: only its id is looked for
	// in what follows. A line within the limit is not scanned.
	var over *rpc.IDScan
	for {
		chunk, err := f.r.ReadSlice('\n')
		switch {
		case over != nil:
			over.Feed(chunk)
		case len(line)+len(chunk) > MaxLine+2: // +2: the line end
			over = new(rpc.IDScan)
			over.Feed(line)
			over.Feed(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(line) > 0 || over != nil):
			// a last line without its newline
		case err != nil:
			return nil, err
		}
		if over != nil {
			return nil, &rpc.Skipped{Code: rpc.CodeInvalidRequest, Msg: fmt.Sprintf("message over the %d-byte limit; skipped", MaxLine), ID: over.RequestID()}
		}
		return bytes.TrimSpace(line), nil
	}
}
