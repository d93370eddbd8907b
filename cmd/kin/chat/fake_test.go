package chat_test

import (
	"context"
	"encoding/json"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// fake is a scripted service on the wire, for what the real one cannot be
// made to send without an MCP server: elicitations, MCP call approvals,
// server launches, acknowledgements and /mcp rows. It answers the
// lifecycle and records every request.
type fake struct {
	t    *testing.T
	conn *jsonrpc2.Conn

	mu      sync.Mutex
	reqs    []call
	changed chan struct{}
	results map[string]any // method -> result (or *jsonrpc2.Error)
}

type call struct {
	method string
	params json.RawMessage
}

func newFake(t *testing.T) (*fake, net.Conn) {
	a, b := net.Pipe()
	f := &fake{t: t, changed: make(chan struct{}), results: map[string]any{
		"initialize": map[string]any{"protocolVersion": "1", "serverInfo": map[string]any{"name": "kin", "version": "fake"},
			"model": map[string]any{"configured": true, "model": "fake-1"}, "workspaceFolders": []string{"/w"}},
		"session/new": map[string]any{"session": map[string]any{"sessionId": "s_fake", "title": ""}},
		"turn/start":  map[string]any{"turnId": "t_1"},
	}}
	f.conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(a, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.HandlerWithError(f.handle))
	t.Cleanup(func() { f.conn.Close() })
	return f, b
}

// fakeChat runs an interactive kin chat on a new fake service and waits
// for its first prompt.
func fakeChat(t *testing.T) (*fake, *session) {
	t.Helper()
	f, conn := newFake(t)
	s := run(t, conn, true, nil)
	s.out.waitFor(t, "You> ")
	return f, s
}

func (f *fake) handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, call{req.Method, params})
	close(f.changed)
	f.changed = make(chan struct{})
	res, ok := f.results[req.Method]
	f.mu.Unlock()
	if req.Notif {
		return nil, nil
	}
	if e, isErr := res.(*jsonrpc2.Error); isErr {
		return nil, e
	}
	if !ok {
		return map[string]any{}, nil
	}
	if fn, ok := res.(func() any); ok {
		return fn(), nil // an answer the test holds back
	}
	return res, nil
}

func (f *fake) set(method string, result any) {
	f.mu.Lock()
	f.results[method] = result
	f.mu.Unlock()
}

func (f *fake) notify(method string, params any) {
	f.t.Helper()
	if err := f.conn.Notify(context.Background(), method, params); err != nil {
		f.t.Fatalf("notify %s: %v", method, err)
	}
}

// waitCall returns the params of the n-th (1-based) request of method.
func (f *fake) waitCall(method string, n int) map[string]any {
	f.t.Helper()
	deadline := time.After(timeout)
	for {
		f.mu.Lock()
		seen := 0
		for _, c := range f.reqs {
			if c.method == method {
				seen++
				if seen == n {
					f.mu.Unlock()
					var m map[string]any
					_ = json.Unmarshal(c.params, &m)
					return m
				}
			}
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			f.t.Fatalf("timed out waiting for request %s #%d", method, n)
			return nil
		}
	}
}
