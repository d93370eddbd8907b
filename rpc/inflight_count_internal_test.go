package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// The count of requests in flight (the MaxUnanswered bound) must be what
// jsonrpc2 itself takes for a request, whatever a non-conforming peer
// writes. Counting from kin's own reading of the body (an exact "id" key,
// any "method") disagreed with the library: an id key written with an
// escape ("\u0069d") is a request to jsonrpc2, answered, but was not
// counted, so each such answer lowered the count and the peer could then
// have more than MaxUnanswered requests read; a repeated "id" whose last
// value is null (a notification to jsonrpc2, never answered), or a
// "METHOD":null that makes jsonrpc2 read a response, was counted and never
// answered, so 256 of them stopped kin reading the connection for good.
func TestRequestsInFlightAreCountedAsJSONRPC2ReadsThem(t *testing.T) {
	bodies := []string{
		`{"jsonrpc":"2.0","\u0069d":1,"method":"m"}`,                     // a request to jsonrpc2
		`{"jsonrpc":"2.0","id":2,"method":"m","id":null}`,                // a notification to jsonrpc2
		`{"jsonrpc":"2.0","id":3,"method":"m","METHOD":null,"result":1}`, // a response to jsonrpc2
		`{"jsonrpc":"2.0","ID":4,"method":"m"}`,                          // a notification: member names are case-sensitive
		`{"jsonrpc":"2.0","id":5,"Method":"m"}`,                          // refused
		`{"jsonrpc":"2.0","id":6,"\u006dethod":"m"}`,                     // a request to jsonrpc2
		`{"jsonrpc":"2.0","id":"7","method":"m"}`,                        // a plain request
	}
	for _, body := range bodies {
		t.Run(body, func(t *testing.T) {
			kinEnd, peer := net.Pipe()
			s := newStream(kinEnd, nil, nil)
			conn := s.NewConn(context.Background(), jsonrpc2.HandlerWithError(
				func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return "ok", nil }))
			defer conn.Close()

			// The message, then a plain request whose answer says the
			// first was dealt with (answers are written in order).
			sentinel := `{"jsonrpc":"2.0","id":"last","method":"m"}`
			go func() {
				for _, b := range []string{body, sentinel} {
					fmt.Fprintf(peer, "Content-Length: %d\r\n\r\n%s", len(b), b)
				}
			}()
			r := bufio.NewReader(peer)
			for {
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				peer.SetReadDeadline(time.Now().Add(10 * time.Second))
				if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &m); err != nil {
					t.Fatal(err)
				}
				if string(m.ID) == `"last"` {
					break
				}
			}
			// The answer is counted as it is queued: once read, it was.
			if unanswered, _ := s.Pressure(); unanswered != 0 {
				t.Errorf("%d requests counted in flight after every request was answered", unanswered)
			}
		})
	}
}

// jsonrpc2 hands OnRecv the answer to one of kin's own requests (an
// applyEdit) together with that request: an answer is not a request of
// the peer's, and must not be counted as one in flight (never answered, it
// would stay counted for good).
func TestAnswersToKinsRequestsAreNotCountedInFlight(t *testing.T) {
	kinEnd, peer := net.Pipe()
	s := newStream(kinEnd, nil, nil)
	conn := s.NewConn(context.Background(), jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return "ok", nil }))
	defer conn.Close()
	done := make(chan error, 1)
	go func() { done <- conn.Call(context.Background(), "workspace/applyEdit", nil, nil) }()

	r := bufio.NewReader(peer)
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &m); err != nil {
		t.Fatal(err)
	}
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(peer, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"applied": true}}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if unanswered, _ := s.Pressure(); unanswered != 0 {
		t.Errorf("%d requests counted in flight after the editor answered kin's own", unanswered)
	}
}
