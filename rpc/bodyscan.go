package rpc

import (
	"bytes"
	"encoding/json"
)

// bodyScan follows a frame's body byte by byte, keeping nothing of it, just
// far enough to know two things: where the top-level JSON value ends (so a
// Content-Length that is too long is noticed) and the top-level "id" (so a
// frame kin refuses, even one too large to keep, is answered with its own
// id, and a request whose id is null is refused). It is not a validator:
// json.Unmarshal judges the body kin keeps. A body that does not start
// with an object or an array is not followed.
type bodyScan struct {
	started bool // the first non-blank byte was seen
	opaque  bool // not an object or an array: its end is not looked for
	done    bool // the top-level value ended
	depth   int
	inStr   bool
	esc     bool

	// In the top-level object: expecting a key, reading one, reading the
	// value of "id".
	object  bool
	wantKey bool
	inKey   bool
	key     []byte // the key being read, as written (at most maxKeyBytes+1)
	inID    bool
	val     []byte
	long    bool // the id's value is over maxIDBytes
	// whole is set when the body is kept anyway (readBody): its string or
	// number id is kept however long. A string id over maxIDBytes went
	// through jsonrpc2 unaliased, and when it started as an alias does it
	// was answered with the bytes after the prefix as its id.
	whole bool

	id json.RawMessage // the top-level id, when it is a string or number
	// nullID is set when the top-level id is null.
	nullID bool
	// method is set once a top-level "method" key was read: the message
	// is a request (or a notification), not an answer to one of kin's.
	method bool
}

// requestID is the id to answer a refused message with: a request's own,
// read so far. An answer to one of kin's own requests (workspace/applyEdit)
// has an id too, but from kin's numbering, not the editor's: answered with
// it, a refusal reached whichever request of the editor's had that number.
func (b *bodyScan) requestID() json.RawMessage {
	if !b.method {
		return nil
	}
	return b.id
}

// nullIDRequest reports whether the body is a request whose id is null,
// which jsonrpc2 would take for a notification and kin never answer.
func (b *bodyScan) nullIDRequest() bool { return b.method && b.nullID }

// maxIDBytes bounds the id kept of a body that is not kept (a frame or
// line over the size limit); a longer one is not answered with.
const maxIDBytes = 256

// maxKeyBytes is the longest spelling of a key the scanner looks for:
// "method" with every letter escaped (\u006d\u0065...).
const maxKeyBytes = len("method") * len(`\u0000`)

// isKey reports whether a top-level key, as written between its quotes, is
// name. A key spelt with escapes is the key it spells ("\u0069d" is "id"),
// as jsonrpc2 reads it: taken for some other key, the id of such a request
// was not carried as an alias (wireid.go), and "id":-1 was answered as
// 18446744073709551615.
func isKey(raw []byte, name string) bool {
	if len(raw) > maxKeyBytes {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	var k string
	quoted := append(append([]byte{'"'}, raw...), '"')
	return json.Unmarshal(quoted, &k) == nil && k == name
}

func (b *bodyScan) ended() bool { return b.done }

// feed scans the next bytes of the body and returns how many it used: all
// of them, or up to the byte that ended the top-level value.
func (b *bodyScan) feed(p []byte) int {
	for i, c := range p {
		switch {
		case b.done || b.opaque:
			return len(p)
		case !b.started:
			if isSpace(c) {
				continue
			}
			b.started = true
			if c != '{' && c != '[' {
				b.opaque = true
				return len(p)
			}
			b.depth, b.object, b.wantKey = 1, c == '{', c == '{'
			continue
		}
		if b.inID {
			if len(b.val) <= maxIDBytes || (b.whole && UsableID(b.val)) {
				b.val = append(b.val, c)
			} else {
				b.long = true
			}
		}
		if b.inStr {
			switch {
			case b.esc:
				b.esc = false
			case c == '\\':
				b.esc = true
			case c == '"':
				b.inStr, b.inKey = false, false
				continue
			}
			if b.inKey && len(b.key) <= maxKeyBytes {
				b.key = append(b.key, c) // as written, escapes and all
			}
			continue
		}
		switch c {
		case '"':
			b.inStr = true
			if b.depth == 1 && b.wantKey {
				b.inKey, b.wantKey, b.key = true, false, b.key[:0]
			}
		case '{', '[':
			b.depth++
		case '}', ']':
			b.depth--
			if b.depth == 0 {
				b.endValue()
				b.done = true
				return i + 1
			}
		case ':':
			if b.depth == 1 && b.object {
				b.inID, b.val, b.long = isKey(b.key, "id"), b.val[:0], false
				if b.inID {
					// The last of a repeated "id" is the id, as jsonrpc2
					// (encoding/json) reads it: an earlier one kept when
					// the last is null, an object or too long to keep had
					// the message carried through jsonrpc2 under the
					// earlier id's alias, as a request it is not.
					b.id, b.nullID = nil, false
				}
				b.method = b.method || isKey(b.key, "method")
			}
		case ',':
			if b.depth == 1 && b.object {
				b.endValue()
				b.wantKey = true
			}
		}
	}
	return len(p)
}

// endValue closes a top-level member: the id is kept when it is a string
// or a number.
func (b *bodyScan) endValue() {
	if !b.inID {
		return
	}
	b.inID = false
	if b.long || len(b.val) == 0 {
		return
	}
	v := bytes.TrimSpace(b.val[:len(b.val)-1]) // without the ',' or '}' that ended it
	if len(v) == 0 || !json.Valid(v) {
		return
	}
	b.nullID = string(v) == "null"
	if UsableID(v) {
		b.id = append(json.RawMessage(nil), v...)
	}
}

// UsableID reports whether id, a valid JSON value, is one a request can
// be answered under: a string or a number (JSON-RPC), the only ids
// jsonrpc2 holds (itself or through an alias, wireid.go). A request with
// any other id (null, true, an object) is refused, with id null.
func UsableID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || ('0' <= c && c <= '9')
}
