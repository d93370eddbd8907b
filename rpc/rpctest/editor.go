// Package rpctest is a fake editor for tests: it drives a real kin server
// over net.Pipe with the real LSP framing, records every notification, and
// lets a test await them instead of sleeping. The exchange is printed only
// when a test fails.
package rpctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// Timeout bounds every wait. It guards against a hang, it is no timing
// goal (those are benchmarks): it is sized so that the slowest case (a
// multi-megabyte turn under the race detector, `go test -race -count=3` on
// a busy two-core machine) never meets it.
const Timeout = 90 * time.Second

// Note is one notification kin sent.
type Note struct {
	Method string
	Params json.RawMessage
}

// Editor is the fake editor.
type Editor struct {
	t    testing.TB
	Conn *jsonrpc2.Conn
	// Done is closed when the server's Serve returned; Exit is its code.
	Done chan struct{}
	Exit int

	// mu guards notes, changed, log, onNote, requests, onRequest, docs
	// and wire.
	mu        sync.Mutex
	notes     []Note
	changed   chan struct{}
	log       []string
	onNote    []func(Note)
	requests  []Note
	onRequest map[string]func(req *jsonrpc2.Request, reply func(result any, err error))
	docs      *buffers
	wire      []Frame
}

// Frame is one JSON-RPC message as it crossed the pipe.
type Frame struct {
	From string          // "editor" or "kin"
	Msg  json.RawMessage // the message, as jsonrpc2 encoded it
}

// Start serves opts on one end of a pipe and connects an editor to the
// other end.
func Start(t testing.TB, opts rpc.Options) *Editor {
	t.Helper()
	a, b := net.Pipe()
	e := &Editor{t: t, Done: make(chan struct{}), changed: make(chan struct{}), onRequest: map[string]func(*jsonrpc2.Request, func(any, error)){}}
	go func() {
		e.Exit = rpc.Serve(context.Background(), a, opts)
		close(e.Done)
	}()
	record := func(from string) func(*jsonrpc2.Request, *jsonrpc2.Response) {
		return func(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
			var msg any = req
			if resp != nil {
				msg = resp
			}
			b, err := json.Marshal(msg)
			if err != nil {
				return
			}
			e.mu.Lock()
			e.wire = append(e.wire, Frame{From: from, Msg: b})
			e.mu.Unlock()
		}
	}
	e.Conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(b, jsonrpc2.VSCodeObjectCodec{}), e,
		jsonrpc2.OnSend(record("editor")), jsonrpc2.OnRecv(record("kin")))
	t.Cleanup(func() {
		if t.Failed() {
			e.mu.Lock()
			t.Logf("JSON-RPC exchange:\n%s", strings.Join(e.log, "\n"))
			e.mu.Unlock()
		}
		e.Conn.Close()
		select {
		case <-e.Done:
		case <-time.After(Timeout):
			t.Errorf("server did not stop after the editor went away")
		}
	})
	return e
}

// Handle implements jsonrpc2.Handler: it records every notification, and
// answers kin's requests with the handler OnRequest set (which may answer
// later, or never), or with -32601 as the shims do.
func (e *Editor) Handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	n := Note{Method: req.Method, Params: params}
	if !req.Notif {
		e.mu.Lock()
		e.requests = append(e.requests, n)
		e.log = append(e.log, "<- (request "+req.ID.String()+") "+req.Method+" "+string(params))
		h := e.onRequest[req.Method]
		close(e.changed)
		e.changed = make(chan struct{})
		e.mu.Unlock()
		reply := func(result any, err error) {
			e.logf("-> (reply %s) %s err=%v", req.ID, mustJSON(result), err)
			if err != nil {
				var re *jsonrpc2.Error
				if !errors.As(err, &re) {
					re = &jsonrpc2.Error{Code: jsonrpc2.CodeInternalError, Message: err.Error()}
				}
				_ = c.ReplyWithError(context.Background(), req.ID, re)
				return
			}
			_ = c.Reply(context.Background(), req.ID, result)
		}
		if h == nil {
			reply(nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "rpctest: method not found: " + req.Method})
			return
		}
		h(req, reply)
		return
	}
	e.mu.Lock()
	e.notes = append(e.notes, n)
	e.log = append(e.log, "<- "+req.Method+" "+string(params))
	close(e.changed)
	e.changed = make(chan struct{})
	hooks := append([]func(Note){}, e.onNote...)
	e.mu.Unlock()
	for _, h := range hooks {
		h(n)
	}
}

// OnRequest answers kin's requests of method with h, in the read loop: h
// must not block; it calls reply once (from any goroutine), or never.
func (e *Editor) OnRequest(method string, h func(req *jsonrpc2.Request, reply func(result any, err error))) {
	e.mu.Lock()
	e.onRequest[method] = h
	e.mu.Unlock()
}

// WaitRequest returns the params of the first request of method kin sent.
func (e *Editor) WaitRequest(method string) json.RawMessage {
	e.t.Helper()
	var params json.RawMessage
	e.await("the request "+method, func() bool {
		for _, r := range e.requests {
			if r.Method == method {
				params = r.Params
				return true
			}
		}
		return false
	})
	return params
}

// await returns once find, called under mu now and after every message kin
// sends, reports true; it fails the test, naming what, after Timeout.
func (e *Editor) await(what string, find func() bool) {
	e.t.Helper()
	deadline := time.After(Timeout)
	for {
		e.mu.Lock()
		found, ch := find(), e.changed
		e.mu.Unlock()
		if found {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			e.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Wire returns every message that crossed the pipe so far, in order.
func (e *Editor) Wire() []Frame {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Frame(nil), e.wire...)
}

// Requests returns the params of every request kin sent of method.
func (e *Editor) Requests(method string) []json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []json.RawMessage
	for _, r := range e.requests {
		if r.Method == method {
			out = append(out, r.Params)
		}
	}
	return out
}

// OnNote runs f for every later notification (in the read loop: f must not
// call the server synchronously; start a goroutine for that).
func (e *Editor) OnNote(f func(Note)) {
	e.mu.Lock()
	e.onNote = append(e.onNote, f)
	e.mu.Unlock()
}

// Call sends a request and decodes its result into out (when not nil).
func (e *Editor) Call(method string, params, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	e.logf("-> %s %s", method, mustJSON(params))
	var raw json.RawMessage
	err := e.Conn.Call(ctx, method, params, &raw)
	e.logf("   = %s err=%v", string(raw), err)
	if err != nil {
		return err
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// MustCall is Call that fails the test on an error.
func (e *Editor) MustCall(method string, params, out any) {
	e.t.Helper()
	if err := e.Call(method, params, out); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

// CallErr expects an error response and returns its code and message.
func (e *Editor) CallErr(method string, params any) (int64, string) {
	e.t.Helper()
	err := e.Call(method, params, nil)
	re, ok := err.(*jsonrpc2.Error)
	if !ok {
		e.t.Fatalf("%s: want a JSON-RPC error, got %v", method, err)
	}
	return re.Code, re.Message
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	e.logf("-> (notify) %s %s", method, mustJSON(params))
	_ = e.Conn.Notify(context.Background(), method, params)
}

// Initialize runs the handshake with the given workspace folders.
func (e *Editor) Initialize(roots ...string) rpc.InitializeResult {
	e.t.Helper()
	return e.InitializeWith(nil, roots...)
}

// InitializeWith runs the handshake declaring caps (initialize's
// capabilities; nil declares none).
func (e *Editor) InitializeWith(caps any, roots ...string) rpc.InitializeResult {
	e.t.Helper()
	var folders []rpc.WorkspaceFolder
	for _, r := range roots {
		folders = append(folders, rpc.WorkspaceFolder{URI: "file://" + r})
	}
	p := rpc.InitializeParams{ClientInfo: &rpc.ClientInfo{Name: "rpctest"}, WorkspaceFolders: folders}
	if caps != nil {
		b, err := json.Marshal(caps)
		if err != nil {
			e.t.Fatal(err)
		}
		p.Capabilities = &rpc.ClientCapabilities{}
		if err := json.Unmarshal(b, p.Capabilities); err != nil {
			e.t.Fatal(err)
		}
	}
	var res rpc.InitializeResult
	e.MustCall("initialize", p, &res)
	e.Notify("initialized", struct{}{})
	return res
}

// Wait returns the first notification (from the start of the connection)
// of method whose params satisfy match (nil matches any).
func (e *Editor) Wait(method string, match func(map[string]any) bool) map[string]any {
	e.t.Helper()
	var m map[string]any
	from := 0 // notes before this were already looked at
	e.await(method, func() bool {
		for _, n := range e.notes[from:] {
			from++
			if n.Method != method {
				continue
			}
			m = nil
			_ = json.Unmarshal(n.Params, &m)
			if match == nil || match(m) {
				return true
			}
		}
		return false
	})
	return m
}

// Notes returns every notification of method so far.
func (e *Editor) Notes(method string) []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []map[string]any
	for _, n := range e.notes {
		if n.Method == method {
			var m map[string]any
			_ = json.Unmarshal(n.Params, &m)
			out = append(out, m)
		}
	}
	return out
}

// Count is how many notifications of method so far match (nil: all).
func (e *Editor) Count(method string, match func(map[string]any) bool) int {
	n := 0
	for _, m := range e.Notes(method) {
		if match == nil || match(m) {
			n++
		}
	}
	return n
}

// Raw returns every notification as sent.
func (e *Editor) Raw() []Note {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Note(nil), e.notes...)
}

// Field matches notifications whose key equals value.
func Field(key string, value any) func(map[string]any) bool {
	return func(m map[string]any) bool { return fmt.Sprint(m[key]) == fmt.Sprint(value) }
}

// All matches when every matcher does.
func All(ms ...func(map[string]any) bool) func(map[string]any) bool {
	return func(m map[string]any) bool {
		for _, f := range ms {
			if !f(m) {
				return false
			}
		}
		return true
	}
}

// Text joins a turn's deltas.
func (e *Editor) Text(turnID string) string {
	var b strings.Builder
	for _, d := range e.Notes("turn/delta") {
		if d["turnId"] == turnID {
			b.WriteString(fmt.Sprint(d["text"]))
		}
	}
	return b.String()
}

func (e *Editor) logf(format string, args ...any) {
	e.mu.Lock()
	e.log = append(e.log, fmt.Sprintf(format, args...))
	e.mu.Unlock()
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
