package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// capture is one end of a connection that keeps what is written to it and
// has nothing to read.
type capture struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
}

func (c *capture) Read([]byte) (int, error) { <-c.done; return 0, jsonrpc2.ErrClosed }
func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}
func (c *capture) Close() error { return nil }
func (c *capture) bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// frames sends the same messages through a jsonrpc2 connection over s and
// returns what was written.
func frames(t *testing.T, s jsonrpc2.ObjectStream, c *capture) []byte {
	t.Helper()
	ctx := context.Background()
	conn := jsonrpc2.NewConn(ctx, s, jsonrpc2.HandlerWithError(func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	defer func() { close(c.done); conn.Close() }()
	params := map[string]any{"sessionId": "s", "text": "<a href=\"x\">&amp;</a> \u2028 é 😀 \x01 tab\t", "n": 1.5, "none": nil}
	if err := conn.Notify(ctx, "turn/delta", params); err != nil {
		t.Fatal(err)
	}
	if err := conn.Notify(ctx, NotifyTurnDelta, TurnDelta{SessionID: "s", TurnID: "t", Text: "tok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.DispatchCall(ctx, "approval/request", params); err != nil {
		t.Fatal(err)
	}
	if os, ok := s.(*ObjectStream); ok {
		os.AwaitWritten() // kin writes from its outbox
	}
	return c.bytes()
}

// TestFramesAreWhatJSONRPC2sCodecWrites: kin's stream writes each message
// byte for byte as jsonrpc2's own VSCodeObjectCodec does (which re-encodes
// the message with json.Marshal), though it takes the message's JSON as
// jsonrpc2 encoded it.
func TestFramesAreWhatJSONRPC2sCodecWrites(t *testing.T) {
	kin := &capture{done: make(chan struct{})}
	lib := &capture{done: make(chan struct{})}
	got := frames(t, newStream(kin, nil, nil), kin)
	want := frames(t, jsonrpc2.NewBufferedStream(lib, jsonrpc2.VSCodeObjectCodec{}), lib)
	if len(got) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("kin wrote\n%s\njsonrpc2's codec\n%s", got, want)
	}
}

// TestARawMessageIsStillChecked: the answers kin builds for skipped frames
// go through json.Marshal, which refuses JSON that is not valid.
func TestARawMessageIsStillChecked(t *testing.T) {
	if _, err := encode(json.RawMessage(`{"jsonrpc":"2.0",`)); err == nil {
		t.Fatal("invalid JSON was encoded")
	}
	if b, err := encode(json.RawMessage("{ \"a\" : 1 }")); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("%s, %v", b, err)
	}
}
