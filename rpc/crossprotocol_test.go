package rpc_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// `kin serve --listen 127.0.0.1:PORT` has no authentication: anything that
// can reach the port is an editor. A web page can: fetch() posts to
// http://127.0.0.1:PORT with no preflight (a text/plain body), and an HTTP
// request is headers, a Content-Length and a body, which kin's framing read
// as a frame, the "POST / HTTP/1.1" line skipped as a bad header. A body
// holding more than one value was read on as further frames, so the page
// could send kin any request it liked (mcp/add writes a server, its command
// the page's, into the person's settings; here session/new). A header
// block that is an HTTP request (its request line, or a Host or Origin
// header, which every browser sends and no editor does) ends the
// connection unread.
func TestAnHTTPRequestEndsTheConnection(t *testing.T) {
	long := "POST /" + strings.Repeat("a", 10<<10) + " HTTP/1.1\r\n" // over a header line's cap: skipped to the Content-Length
	for name, h := range map[string]struct{ before, after string }{
		"browser fetch": {"POST / HTTP/1.1\r\nHost: 127.0.0.1:7777\r\nOrigin: https://evil.example\r\nContent-Type: text/plain;charset=UTF-8\r\n", ""},
		"origin only":   {"Origin: null\r\n", ""},
		"host only":     {"Host: localhost:7777\r\n", ""},
		"long url":      {long + "Host: 127.0.0.1:7777\r\nConnection: keep-alive\r\n", "Content-Type: text/plain\r\nSec-Fetch-Mode: no-cors\r\n"},
		// a long URL, and the Content-Length the last header: everything
		// before it skipped unread
		"long url, length last": {long + "Host: 127.0.0.1:7777\r\nOrigin: null\r\nUser-Agent: x\r\n", ""},
		// over the reader's buffer, with a frame header in the URL past it
		"longer url": {"POST /" + strings.Repeat("a", 70<<10) + "Content-Length:9 HTTP/1.1\r\n", ""},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			r := rpctest.StartRaw(t, e.Options())
			initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
			add := `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"title":"kin-pwned"}}`
			// The request's own body is a value kin refuses; the frames after
			// it are the page's.
			body := "{}" + rpctest.Framed(initialize) + rpctest.Framed(add)
			r.WriteUntilClosed(fmt.Sprintf("%sContent-Length: %d\r\n%s\r\n%s", h.before, len(body), h.after, body))
			select {
			case <-r.Done:
			case <-time.After(10 * time.Second):
				t.Errorf("kin went on serving a browser's HTTP request")
				for range 3 { // what it did for the page: the refusal, initialize, session/new
					if a := r.Next(); string(a.ID) == "2" && a.Error == nil {
						t.Fatalf("kin ran the page's session/new: %s", a.Result)
					}
				}
				t.FailNow()
			}
			if logs, _ := filepath.Glob(filepath.Join(e.Home, "sessions", "*.jsonl")); len(logs) > 0 {
				t.Fatalf("the page's session/new made a session: %v", logs)
			}
		})
	}
}

// A request whose id is null (JSON-RPC discourages it) was taken by
// jsonrpc2 for a notification and never answered, though every request
// gets exactly one answer (PROTOCOL.md): it is refused, with id null.
func TestARequestWithANullIDIsRefused(t *testing.T) {
	r := rawEditor(t)
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":null,"method":"session/list","params":{}}`))
	if a := refused(t, r, "null", rpc.CodeInvalidRequest); !strings.Contains(a.Error.Message, "id") {
		t.Errorf("the refusal does not say why: %v", a.Error)
	}
	r.Write(rpctest.Framed(listReq(3)))
	answered(t, r, "3")
}

// The last of a repeated "id" is the message's id, as jsonrpc2 reads it.
// kin's frame scanner kept an earlier -1 when a later "id" was null or an
// object and carried the message through jsonrpc2 under -1's alias: it ran
// as a request answered with -1, where the same message with a plain id (2)
// was a notification, and one with an object id refused. It is refused as
// any request with a null or unusable id is, with id null.
func TestALaterRepeatedIDIsTheID(t *testing.T) {
	r := rawEditor(t)
	for _, last := range []string{`null`, `{"a":1}`, `true`} {
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":-1,"method":"session/list","params":{},"id":` + last + `}`))
		refused(t, r, "null", rpc.CodeInvalidRequest)
	}
	r.Write(rpctest.Framed(listReq(3)))
	answered(t, r, "3")
}

// A connection that ends for a reason other than its close (here an HTTP
// request) is logged while it still stands: jsonrpc2 logged such a reason
// itself after announcing the disconnect, when Serve may already have
// returned (a test's logger then raced with the test's end).
func TestAnInputEndedIsLoggedBeforeServeReturns(t *testing.T) {
	e := newEnv(t)
	core, logs := observer.New(zap.DebugLevel)
	opts := e.Options()
	opts.Logger = zap.New(core)
	r := rpctest.StartRaw(t, opts)
	r.WriteUntilClosed("POST / HTTP/1.1\r\nHost: 127.0.0.1:7777\r\nContent-Length: 2\r\n\r\n{}")
	select {
	case <-r.Done:
	case <-time.After(10 * time.Second):
		t.Fatal("kin went on serving a browser's HTTP request")
	}
	if n := logs.FilterMessage("the connection ended").Len(); n != 1 {
		t.Errorf("%d lines say why the connection ended by the time Serve returned, want 1: %v", n, logs.All())
	}
	time.Sleep(100 * time.Millisecond) // what jsonrpc2 would log comes after
	for _, l := range logs.All() {
		if strings.Contains(l.Message, "protocol error") {
			t.Errorf("logged after Serve returned: %q", l.Message)
		}
	}
}
