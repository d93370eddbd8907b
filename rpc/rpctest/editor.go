// Package rpctest is a fake editor for tests: it drives a real kin server
// over net.Pipe with the real LSP framing, records every notification, and
// lets a test await them instead of sleeping. The exchange is printed only
// when a test fails.
package rpctest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// Timeout bounds every wait; a test that needs longer is broken.
const Timeout = 20 * time.Second

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

	// mu guards notes, changed, log, onNote and received.
	mu       sync.Mutex
	notes    []Note
	changed  chan struct{}
	log      []string
	onNote   []func(Note)
	received []Message
}

// Message is one message kin sent, in the order the editor read them: a
// notification (Method set) or a response (ID set, with Result or Error).
type Message struct {
	Method string
	Params json.RawMessage
	ID     string
	Result json.RawMessage
	Error  *jsonrpc2.Error
}

// Start serves opts on one end of a pipe and connects an editor to the
// other end.
func Start(t testing.TB, opts rpc.Options) *Editor {
	t.Helper()
	a, b := net.Pipe()
	e := &Editor{t: t, Done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		e.Exit = rpc.Serve(context.Background(), a, opts)
		close(e.Done)
	}()
	e.Conn = jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(b, jsonrpc2.VSCodeObjectCodec{}), jsonrpc2.HandlerWithError(e.handle),
		jsonrpc2.OnRecv(e.recv))
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

func (e *Editor) handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	n := Note{Method: req.Method, Params: params}
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
	return nil, nil
}

// recv records every message in the order it was read.
func (e *Editor) recv(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	var m Message
	switch {
	case resp != nil:
		m.ID, m.Error = resp.ID.String(), resp.Error
		if resp.Result != nil {
			m.Result = *resp.Result
		}
	case req != nil:
		m.Method = req.Method
		if req.Params != nil {
			m.Params = *req.Params
		}
	}
	e.mu.Lock()
	e.received = append(e.received, m)
	e.mu.Unlock()
}

// Received returns every message kin sent so far, notifications and
// responses, in the order they arrived.
func (e *Editor) Received() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Message(nil), e.received...)
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
	var folders []rpc.WorkspaceFolder
	for _, r := range roots {
		folders = append(folders, rpc.WorkspaceFolder{URI: "file://" + r})
	}
	var res rpc.InitializeResult
	e.MustCall("initialize", rpc.InitializeParams{ClientInfo: &rpc.ClientInfo{Name: "rpctest"}, WorkspaceFolders: folders}, &res)
	e.Notify("initialized", struct{}{})
	return res
}

// Wait returns the first notification (from the start of the connection)
// of method whose params satisfy match (nil matches any).
func (e *Editor) Wait(method string, match func(map[string]any) bool) map[string]any {
	e.t.Helper()
	deadline := time.After(Timeout)
	from := 0 // notes before this were already looked at
	for {
		e.mu.Lock()
		for _, n := range e.notes[from:] {
			from++
			if n.Method != method {
				continue
			}
			var m map[string]any
			_ = json.Unmarshal(n.Params, &m)
			if match == nil || match(m) {
				e.mu.Unlock()
				return m
			}
		}
		ch := e.changed
		e.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			e.t.Fatalf("timed out waiting for %s", method)
			return nil
		}
	}
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
