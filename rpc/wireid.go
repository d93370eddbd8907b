package rpc

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
)

// Request ids jsonrpc2 cannot hold.
//
// JSON-RPC lets an id be any string or number. jsonrpc2.ID holds a uint64
// or a string: it decodes "id":-1 through int64 into uint64 and answers
// 18446744073709551615, and refuses 1.5 or 1e3 or a number over int64. The
// library cannot be changed here, so kin's stream, which reads every frame
// before jsonrpc2 does, carries such an id through jsonrpc2 as a string
// alias (the prefix below and the id exactly as the editor wrote it), and
// writes the original back in the response. A string id that happens to
// start with the prefix is aliased too, so the mapping is one to one.

// idAliasPrefix starts an alias. It begins with a NUL, which no editor puts
// in an id.
const idAliasPrefix = "\x00kin-id:"

// aliasFor returns the alias of a request id jsonrpc2 would change or
// refuse; ok is false for one it carries as it is.
func aliasFor(id json.RawMessage) (string, bool) {
	if len(id) == 0 {
		return "", false
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil || !strings.HasPrefix(s, idAliasPrefix) {
			return "", false
		}
		return idAliasPrefix + string(id), true
	}
	if _, plain := decimal(string(id)); plain {
		return "", false // a number jsonrpc2 keeps as it is: digits that fit an int64
	}
	return idAliasPrefix + string(id), true
}

// withID returns the body with its top-level id replaced.
func withID(body []byte, id string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body, err
	}
	b, _ := json.Marshal(id)
	m["id"] = b
	return json.Marshal(m)
}

// AliasID is a framing's part (kin serve's and kin acp's): the body of a
// message just read, with its request id (as the peer wrote it) replaced by
// an alias when jsonrpc2 would change or refuse it; ok says it was. Once a
// body was aliased, the framing writes every message through UnaliasID.
func AliasID(body []byte, id json.RawMessage) (_ []byte, ok bool) {
	alias, ok := aliasFor(id)
	if !ok {
		return body, false
	}
	aliased, err := withID(body, alias)
	if err != nil {
		return body, false
	}
	return aliased, true
}

// UnaliasID puts the peer's own id back into an encoded response that
// carries an alias (see AliasID); any other message is returned as it is.
func UnaliasID(data []byte) []byte { return unaliasID(data) }

// RequestID is the jsonrpc2.ID that stands for a request id as the peer
// wrote it (for a cancel request naming it).
func RequestID(raw json.RawMessage) (jsonrpc2.ID, error) { return idOf(raw) }

// aliasJSON is how an alias starts once encoded: `{"id":"\u0000kin-id:`.
// jsonrpc2 encodes a response's id first.
var aliasJSON = func() []byte {
	b, _ := json.Marshal(idAliasPrefix)
	return append([]byte(`{"id":`), b[:len(b)-1]...)
}()

// unaliasID puts the editor's own id back into an encoded response that
// carries an alias; any other message is returned as it is.
func unaliasID(data []byte) []byte {
	if !bytes.HasPrefix(data, aliasJSON) {
		return data
	}
	const at = len(`{"id":`)
	dec := json.NewDecoder(bytes.NewReader(data[at:]))
	var alias string
	if dec.Decode(&alias) != nil {
		return data
	}
	end := at + int(dec.InputOffset())
	out := make([]byte, 0, len(data))
	out = append(out, data[:at]...)
	out = append(out, alias[len(idAliasPrefix):]...)
	return append(out, data[end:]...)
}

// idOf is the jsonrpc2.ID that stands for a request id as the editor wrote
// it (for $/cancelRequest).
func idOf(raw json.RawMessage) (jsonrpc2.ID, error) {
	raw = bytes.TrimSpace(raw)
	if alias, ok := aliasFor(raw); ok {
		return jsonrpc2.ID{Str: alias, IsString: true}, nil
	}
	var id jsonrpc2.ID
	err := json.Unmarshal(raw, &id)
	return id, err
}
