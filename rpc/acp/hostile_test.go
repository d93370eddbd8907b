package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
)

// rawClient writes lines to a real Server as a hostile or buggy client
// would, byte for byte, and reads kin's lines back.
type rawClient struct {
	t     *testing.T
	conn  net.Conn
	lines chan map[string]any
}

func (w *world) rawConnect() *rawClient {
	t := w.t
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": w.model.URL()}
	sb := sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})
	opts := Options{Options: rpc.Options{
		Home: w.home, Cwd: w.ws, Version: "test",
		Getenv:  func(k string) string { return env[k] },
		Tools:   func([]string) []tool.Tool { return builtin.Tools(builtin.Options{Sandbox: sb}) },
		Sandbox: sb,
		MCP:     &rpc.MCPOptions{},
	}}
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		defer close(served)
		Serve(ctx, a, opts)
	}()
	c := &rawClient{t: t, conn: b, lines: make(chan map[string]any, 4096)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(b)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("kin wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			c.lines <- m
		}
	}()
	t.Cleanup(func() {
		b.Close()
		cancel()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Error("kin did not let go of the connection")
		}
	})
	return c
}

// send writes one line; it fails when kin does not read it within 10 s.
func (c *rawClient) send(line string) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("kin stopped reading: writing %.80q: %v", line, err)
	}
}

// answer waits for kin's answer to id (a JSON value as written), skipping
// every other message.
func (c *rawClient) answer(id string) map[string]any {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the connection closed before the answer to %s", id)
			}
			if _, isReq := m["method"]; isReq {
				continue
			}
			got, _ := json.Marshal(m["id"])
			if string(got) == id {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no answer to %s", id)
		}
	}
}

func (c *rawClient) initialize() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if a := c.answer(`"init"`); a["error"] != nil {
		c.t.Fatalf("initialize: %v", a["error"])
	}
}

// A request whose id is null (JSON-RPC discourages it; a buggy client
// sends it) was taken by jsonrpc2 for a notification, so kin never
// answered it, while the line framing counted it as a request waiting for
// its answer: after MaxUnanswered of them kin stopped reading the
// connection for good. Each must be answered with an error, and the
// connection must go on.
func TestARequestWithANullIDIsRefusedAndTheConnectionGoesOn(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	for i := 0; i < rpc.MaxUnanswered+10; i++ {
		c.send(`{"jsonrpc":"2.0","id":null,"method":"session/list","params":{}}`)
	}
	for i := 0; i < rpc.MaxUnanswered+10; i++ {
		a := c.answer("null")
		e, _ := a["error"].(map[string]any)
		if e == nil || e["code"] != float64(rpc.CodeInvalidRequest) || !strings.Contains(fmt.Sprint(e["message"]), "id") {
			t.Fatalf("answer %d to a request with a null id: %v, want an invalid-request error naming the id", i, a)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`)
	if a := c.answer("7"); a["error"] != nil {
		t.Fatalf("session/list after the null ids: %v", a["error"])
	}
}
