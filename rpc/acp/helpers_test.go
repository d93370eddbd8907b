package acp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// wait bounds every wait of these tests, as rpctest.Timeout does the rpc
// package's: it guards against a hang and is no timing goal. 30 s was met
// on a loaded two-core machine under the race detector by a prompt of
// 1.5 MB (crashedTask's) that takes 1.5 s alone.
const wait = rpctest.Timeout

// frame is one message on the wire as the client saw it.
type frame struct {
	Dir    string          `json:"dir"` // "client" (client to kin) or "kin"
	Method string          `json:"method"`
	Kind   string          `json:"kind"` // request, response, notification
	ID     json.RawMessage `json:"id,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc2.Error `json:"error,omitempty"`
}

// client is a fake ACP client: it drives a real Server over net.Pipe with
// the real line framing, answers kin's requests through handlers and keeps
// every frame.
type client struct {
	t    *testing.T
	conn *jsonrpc2.Conn
	ws   string
	home string
	stop func()

	// mu guards the fields below; cond is signalled on every frame.
	mu       sync.Mutex
	cond     *sync.Cond
	frames   []frame
	methods  map[string]string // request id -> method, both directions
	handlers map[string]func(params json.RawMessage) (any, error)
}

type world struct {
	t     *testing.T
	model *modeltest.Server
	ws    string
	home  string
	trace io.Writer // kin's trace, when set
}

func newWorld(t *testing.T) *world {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	home := t.TempDir()
	return &world{t: t, model: m, ws: ws, home: home}
}

func (w *world) write(name, content string) string {
	p := filepath.Join(w.ws, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// settings writes $KIN_HOME/settings.json (before connect: kin reads it
// at initialize).
func (w *world) settings(content string) {
	if err := os.WriteFile(filepath.Join(w.home, "settings.json"), []byte(content), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// serve starts a Server for the world (env nil: a key and the scripted
// model) on one end of a pipe, and returns the other end, the connection's
// context, and end: it cancels that context and waits until kin let go
// of the connection.
func (w *world) serve(env map[string]string) (net.Conn, context.Context, func()) {
	t := w.t
	if env == nil {
		env = map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.model.URL()}
	}
	sb := sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})
	opts := Options{Options: rpc.Options{
		Home: w.home, Cwd: w.ws, Version: "test",
		Getenv:  func(k string) string { return env[k] },
		Tools:   func([]string) []tool.Tool { return builtin.Tools(builtin.Options{Sandbox: sb}) },
		Sandbox: sb,
		Trace:   w.trace,
		MCP:     &rpc.MCPOptions{},
	}}
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		Serve(ctx, a, opts)
	}()
	return b, ctx, func() {
		cancel()
		select {
		case <-served:
		case <-time.After(wait):
			t.Errorf("kin did not let go of the connection %s after the client closed it", wait)
		}
	}
}

// connect starts a Server for the world and a client on it.
func (w *world) connect(env map[string]string) *client {
	t := w.t
	b, ctx, end := w.serve(env)
	c := &client{t: t, ws: w.ws, home: w.home, methods: map[string]string{}, handlers: map[string]func(json.RawMessage) (any, error){}}
	c.cond = sync.NewCond(&c.mu)
	c.conn = jsonrpc2.NewConn(ctx, newStream(b, nil, nil), jsonrpc2.AsyncHandler(c),
		jsonrpc2.OnRecv(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) { c.record("kin", req, resp) }),
		jsonrpc2.OnSend(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) { c.record("client", req, resp) }))
	t.Cleanup(func() { // after c.stop (cleanups run last first): every frame is in
		c.mu.Lock()
		frames := append([]frame(nil), c.frames...)
		c.mu.Unlock()
		checkSentFrames(t, frames)
	})
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			c.conn.Close()
			end()
		})
	}
	t.Cleanup(c.stop)
	return c
}

// close ends the connection as a client that quits, and returns once kin
// let go of everything (its sessions, their ownership).
func (c *client) close() { c.stop() }

func (c *client) record(dir string, req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var f frame
	f.Dir = dir
	switch {
	case resp == nil: // a response comes with the request it answers
		f.Method = req.Method
		if req.Params != nil {
			f.Params = *req.Params
		}
		if req.Notif {
			f.Kind = "notification"
		} else {
			f.Kind = "request"
			f.ID, _ = json.Marshal(req.ID)
			c.methods[dir+string(f.ID)] = req.Method
		}
	default:
		f.Kind = "response"
		f.ID, _ = json.Marshal(resp.ID)
		other := "kin"
		if dir == "kin" {
			other = "client"
		}
		f.Method = c.methods[other+string(f.ID)]
		if resp.Result != nil {
			f.Result = *resp.Result
		}
		f.Error = resp.Error
	}
	c.frames = append(c.frames, f)
	c.cond.Broadcast()
}

// Handle answers kin's requests with the registered handlers.
func (c *client) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		return
	}
	c.mu.Lock()
	h := c.handlers[req.Method]
	c.mu.Unlock()
	if h == nil {
		_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: -32601, Message: "not handled: " + req.Method})
		return
	}
	var params json.RawMessage
	if req.Params != nil {
		params = *req.Params
	}
	res, err := h(params)
	if err != nil {
		if re, ok := err.(*jsonrpc2.Error); ok {
			_ = conn.ReplyWithError(ctx, req.ID, re)
			return
		}
		_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: -32603, Message: err.Error()})
		return
	}
	_ = conn.Reply(ctx, req.ID, res)
}

func (c *client) on(method string, h func(params json.RawMessage) (any, error)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handlers[method] = h
}

// call sends a request and decodes its result; an error answer fails.
func (c *client) call(method string, params, result any) {
	c.t.Helper()
	if err := c.tryCall(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) tryCall(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatal(err)
	}
}

// updates are the session/updates received so far (their update objects).
func (c *client) updates(kind string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, f := range c.frames {
		if f.Dir != "kin" || f.Method != NotifySessionUpdate {
			continue
		}
		var n struct {
			Update map[string]any `json:"update"`
		}
		_ = json.Unmarshal(f.Params, &n)
		if kind == "" || n.Update["sessionUpdate"] == kind {
			out = append(out, n.Update)
		}
	}
	return out
}

// until waits for pred over the frames: it wakes on every frame, never
// sleeps; wait without pred holding fails.
func (c *client) until(what string, pred func() bool) {
	c.t.Helper()
	expired := false
	deadline := time.AfterFunc(wait, func() {
		c.mu.Lock()
		expired = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer deadline.Stop()
	for {
		c.mu.Lock()
		seen := len(c.frames)
		c.mu.Unlock()
		if pred() {
			return
		}
		c.mu.Lock()
		for len(c.frames) == seen && !expired {
			c.cond.Wait()
		}
		gone := expired
		c.mu.Unlock()
		if gone {
			c.t.Fatalf("no %s", what)
		}
	}
}

func (c *client) initialize(caps map[string]any) InitializeResponse {
	var res InitializeResponse
	c.call(MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": caps, "clientInfo": map[string]any{"name": "fake", "version": "1"}}, &res)
	return res
}

func (c *client) newSession() string {
	var res NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": c.ws, "mcpServers": []any{}}, &res)
	return res.SessionID
}

func (c *client) prompt(sid string, blocks ...any) PromptResponse {
	c.t.Helper()
	var res PromptResponse
	c.call(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks}, &res)
	return res
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// allow answers every permission request with the option of optionID.
func (c *client) answer(optionID string) {
	c.on(MethodRequestPermission, func(json.RawMessage) (any, error) {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}, nil
	})
}

// sent is a session/prompt on its way: its answer, or why it failed.
type sent struct {
	res chan PromptResponse
	err chan error
}

// promptAsync sends session/prompt without waiting for its answer.
func (c *client) promptAsync(sid string, blocks ...any) sent {
	s := sent{res: make(chan PromptResponse, 1), err: make(chan error, 1)}
	go func() {
		var res PromptResponse
		if err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks}, &res); err != nil {
			s.err <- err
			return
		}
		s.res <- res
	}()
	return s
}

// wantCancelled waits for the prompt's answer, which must be cancelled
// (what is the stop, for the failure's message).
func (s sent) wantCancelled(t *testing.T, what string) {
	t.Helper()
	select {
	case res := <-s.res:
		if res.StopReason != StopCancelled {
			t.Errorf("the prompt answered %q after %s, want cancelled", res.StopReason, what)
		}
	case err := <-s.err:
		t.Fatalf("the prompt failed after %s: %v", what, err)
	case <-time.After(wait):
		t.Fatalf("the prompt was never answered after %s", what)
	}
}

// holdReads makes the client's fs/read_text_file wait: reading closes when
// kin asks, and the read answers reply's once release is closed.
func (c *client) holdReads(reply func() (any, error)) (reading, release chan struct{}) {
	reading, release = make(chan struct{}), make(chan struct{})
	c.on(MethodReadTextFile, func(json.RawMessage) (any, error) {
		close(reading)
		<-release
		return reply()
	})
	return reading, release
}
