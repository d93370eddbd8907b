package acp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
)

// rawClient writes lines to a real Server as a hostile or buggy client
// would, byte for byte, and reads kin's lines back.
type rawClient struct {
	t     *testing.T
	conn  net.Conn
	lines chan map[string]any
	// early are answers read while waiting for another, by id.
	early map[string][]map[string]any
}

func (w *world) rawConnect() *rawClient {
	t := w.t
	b, _, end := w.serve(nil)
	c := &rawClient{t: t, conn: b, lines: make(chan map[string]any, 4096), early: map[string][]map[string]any{}}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(b)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var m map[string]any
			var raw struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || json.Unmarshal(sc.Bytes(), &raw) != nil {
				t.Errorf("kin wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			m[rawID] = string(raw.ID) // the id exactly as kin wrote it
			c.lines <- m
		}
	}()
	t.Cleanup(func() {
		b.Close()
		end()
	})
	return c
}

// promptRunning connects a raw client, opens a session and sends a
// session/prompt with the given id (as written) whose answer the model
// holds until the test ends; it returns once the model has the request.
func (w *world) promptRunning(id string) (*rawClient, string) {
	c := w.rawConnect()
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"` + w.ws + `","mcpServers":[]}}`)
	sid := c.answer(`"new"`)["result"].(map[string]any)["sessionId"].(string)
	hold := make(chan struct{})
	w.t.Cleanup(func() { close(hold) })
	w.model.Script(modeltest.Reply{Text: []string{"a long ", "answer"}, Hold: hold})
	c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"go on"}]}}`)
	w.model.WaitRequests(1, wait)
	return c, sid
}

// rawID is the key of a message's id as kin wrote it (the bytes).
const rawID = "\x00rawID"

// send writes one line; it fails when kin does not read it within 10 s.
func (c *rawClient) send(line string) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("kin stopped reading: writing %.80q: %v", line, err)
	}
}

// answer waits for kin's answer to id (a JSON value as written), keeping
// the other answers for their turn.
func (c *rawClient) answer(id string) map[string]any {
	c.t.Helper()
	if q := c.early[id]; len(q) > 0 {
		c.early[id] = q[1:]
		return q[0]
	}
	deadline := time.After(wait)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the connection closed before the answer to %s", id)
			}
			if _, isReq := m["method"]; isReq {
				continue
			}
			got := m[rawID].(string)
			if got == id {
				return m
			}
			c.early[got] = append(c.early[got], m)
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

// JSON-RPC lets a request's id be any number or string; jsonrpc2 holds a
// uint64 or a string, so kin acp answered "id":-1 as 18446744073709551615
// (the client waits for its answer forever) and refused 1.5 and 1e3. Every
// id comes back as the client wrote it, as kin serve's do.
func TestACPRequestIDsComeBackAsWritten(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	for _, id := range []string{`-1`, `0`, `7`, `1.5`, `1e3`, `-0`, `18446744073709551615`, `99999999999999999999999`,
		`"abc"`, `""`, `"\u0000kin-id:-1"`} {
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/list","params":{}}`)
		if a := c.answer(id); a["error"] != nil {
			t.Errorf("session/list with id %s: %v", id, a["error"])
		}
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"no/such/method"}`)
		if a := c.answer(id); a["error"] == nil || a["error"].(map[string]any)["code"] != float64(rpc.CodeMethodNotFound) {
			t.Errorf("an unknown method with id %s: %v", id, a)
		}
	}
}

// $/cancel_request names a request by the id the client wrote, aliased
// or not: a prompt sent with id -5 is stopped by it and answers cancelled
// under -5.
func TestCancelRequestNamesAnAliasedID(t *testing.T) {
	c, _ := newWorld(t).promptRunning("-5")
	c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":-5}}`)
	a := c.answer("-5")
	if r, _ := a["result"].(map[string]any); r == nil || r["stopReason"] != StopCancelled {
		t.Fatalf("the prompt answered %v, want stopReason cancelled", a)
	}
}
