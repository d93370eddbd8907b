package chat_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/cmd/kin/chat"
)

// --rpc prints every message as JSON on the terminal's standard error.
// JSON escapes C0 controls but not C1 ones (U+0080-U+009F, which xterm
// acts on: U+009B is CSI, U+009D OSC) nor DEL nor bidirectional
// overrides, and the model's words are in the messages: they are printed
// as \u escapes, the same JSON.
func TestRPCFlagEscapesControls(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(modeltest.Reply{Text: []string{"A\u009b2J\u009d52;c;ZXZpbA==\u009cB\u202eC\x7fD\U000E0041E"}})
	s := e.run(true, func(o *chat.Options) { o.RPC = true })
	s.out.waitFor(t, "You> ")
	s.send("hi")
	s.out.waitFor(t, "Assistant> A")
	s.err.waitFor(t, `A\u009b2J\u009d52;c;ZXZpbA==\u009cB\u202eC\u007fD\udb40\udc41E`)
	s.send("/quit")
	s.wait()
	for _, r := range []string{"\u009b", "\u009d", "\u202e", "\x7f"} {
		if strings.Contains(s.err.String(), r) {
			t.Errorf("--rpc printed %q as it is", r)
		}
	}
}

// Under --rpc, jsonrpc2's own log lines (a response to no request, a
// protocol error) go to standard error too, and they quote the peer's
// bytes: a string id, a Content-Length header, a character JSON refused.
// Each is quoted by jsonrpc2 or encoding/json (strconv.Quote), so no
// escape sequence, bell or invisible character of the peer's reaches the
// terminal (held; guards an upgrade of either).
func TestRPCFlagLogLinesQuoteThePeer(t *testing.T) {
	a, b := net.Pipe()
	go func() { _, _ = io.Copy(io.Discard, b) }()
	s := run(t, a, true, func(o *chat.Options) { o.RPC = true })
	hostile := "\x1b]52;c;ZXZpbA==\a\u200b\U000E0041\u202e\u009b"
	id, _ := json.Marshal(hostile)
	body := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":1}`
	fmt.Fprintf(b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	fmt.Fprintf(b, "Content-Length: %s\r\n\r\n", hostile)
	s.err.waitFor(t, "protocol error")
	s.wait()
	b.Close()
	got := s.err.String()
	if !strings.Contains(got, "ignoring response") {
		t.Errorf("no log line of the stray response:\n%q", got)
	}
	for _, r := range []string{"\x1b", "\a", "\u200b", "\U000E0041", "\u202e", "\u009b"} {
		if strings.Contains(got, r) {
			t.Errorf("--rpc printed %q of the peer as it is:\n%q", r, got)
		}
	}
}
