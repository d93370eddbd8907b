package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/kin-dev/kin/agent/modeltest"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

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
	// early are answers read while waiting for another, by id.
	early map[string][]map[string]any
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
		cancel()
		select {
		case <-served:
		case <-time.After(30 * time.Second):
			t.Error("kin did not let go of the connection")
		}
	})
	return c
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

// The person stops a prompt right after sending it (Escape in Zed): the
// session/cancel arrives while kin still reads the prompt's attached file
// through the editor (fs/read_text_file), before the turn began. The
// cancel was lost: no turn was running yet, so the turn then ran to its
// end, asking the model. It must answer cancelled, and ask nothing.
func TestACancelBeforeThePromptsTurnBeginsStopsIt(t *testing.T) {
	w := newWorld(t)
	w.write("notes.txt", "some notes\n")
	c := w.connect(nil)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true}})
	reading := make(chan struct{})
	release := make(chan struct{})
	c.on(MethodReadTextFile, func(json.RawMessage) (any, error) {
		close(reading)
		<-release
		return ReadTextFileResponse{Content: "some notes\n"}, nil
	})
	sid := c.newSession()
	w.model.Script(modeltest.Reply{Text: []string{"an answer the person stopped"}})

	answered := make(chan PromptResponse, 1)
	failed := make(chan error, 1)
	go func() {
		var res PromptResponse
		link := map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(w.ws, "notes.txt"), "name": "notes.txt"}
		if err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("read this"), link}}, &res); err != nil {
			failed <- err
			return
		}
		answered <- res
	}()
	<-reading
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	// session/cancel is a notification: a request after it on the session
	// has been read once it is answered.
	c.call(MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "agent"}, nil)
	close(release)
	select {
	case res := <-answered:
		if res.StopReason != StopCancelled {
			t.Errorf("the prompt the person stopped answered %q, want cancelled", res.StopReason)
		}
	case err := <-failed:
		t.Fatalf("the prompt failed: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt was never answered")
	}
	if n := len(w.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for a prompt stopped before its turn", n)
	}
	// The next prompt is the person's new question: it runs.
	w.model.Script(modeltest.Reply{Text: []string{"fine"}})
	if res := c.prompt(sid, text("and now?")); res.StopReason != StopEndTurn {
		t.Errorf("the next prompt answered %q", res.StopReason)
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
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"` + w.ws + `","mcpServers":[]}}`)
	sid := c.answer(`"new"`)["result"].(map[string]any)["sessionId"].(string)
	hold := make(chan struct{})
	defer close(hold)
	w.model.Script(modeltest.Reply{Text: []string{"a long ", "answer"}, Hold: hold})
	c.send(`{"jsonrpc":"2.0","id":-5,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"go on"}]}}`)
	w.model.WaitRequests(1, 30*time.Second)
	c.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":-5}}`)
	a := c.answer("-5")
	if r, _ := a["result"].(map[string]any); r == nil || r["stopReason"] != StopCancelled {
		t.Fatalf("the prompt answered %v, want stopReason cancelled", a)
	}
}

// Only a cancel read after a prompt stops it: a client that cancelled
// before, then closed and loaded the session again and sent a prompt at
// once (all in one write) gets its prompt answered.
func TestACancelBeforeAPromptDoesNotStopIt(t *testing.T) {
	w := newWorld(t)
	c := w.rawConnect()
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"` + w.ws + `","mcpServers":[]}}`)
	sid := c.answer(`"new"`)["result"].(map[string]any)["sessionId"].(string)
	w.model.Script(modeltest.Reply{Text: []string{"answered"}})
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`
	c.send(strings.Join([]string{cancel, cancel,
		`{"jsonrpc":"2.0","id":"close","method":"session/close","params":{"sessionId":"` + sid + `"}}`,
		`{"jsonrpc":"2.0","id":"load","method":"session/load","params":{"sessionId":"` + sid + `","cwd":"` + w.ws + `","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`,
	}, "\n"))
	for _, id := range []string{`"close"`, `"load"`} {
		if a := c.answer(id); a["error"] != nil {
			t.Fatalf("%s: %v", id, a["error"])
		}
	}
	a := c.answer(`"p"`)
	if r, _ := a["result"].(map[string]any); r == nil || r["stopReason"] != StopEndTurn {
		t.Fatalf("a prompt sent after the cancels answered %v, want end_turn", a)
	}
}

// A client that links many files (an @-mention of a folder, or a bug that
// links one file again and again) had kin read every one, up to 256 KiB
// each, into one question: 4,000 links in a 400 KB line were a gigabyte in
// kin's memory, for a question whose record keeps 2 MiB. Once the
// attachments pass what one question holds, the prompt is refused, naming
// the block, and nothing more is read.
func TestAPromptsAttachmentsAreBounded(t *testing.T) {
	w := newWorld(t)
	path := w.write("big.txt", strings.Repeat("0123456789abcdef\n", 250<<10/17))
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	blocks := []any{text("read these")}
	for range 4000 {
		blocks = append(blocks, map[string]any{"type": "resource_link", "uri": "file://" + path, "name": "big.txt"})
	}
	err := c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks}, nil)
	if code := rpcCode(t, err); code != rpc.CodeInvalidParams || !strings.Contains(err.Error(), "more than kin takes") {
		t.Fatalf("a prompt with 4000 links: %v", err)
	}
	if n := len(w.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	// A few attachments are still welcome.
	w.model.Script(modeltest.Reply{Text: []string{"read"}})
	if res := c.prompt(sid, blocks[:3]...); res.StopReason != StopEndTurn {
		t.Errorf("a prompt with two links answered %q", res.StopReason)
	}
}

// The person stops a prompt while kin reads its attachment through the
// editor, and the editor, told of the cancel, fails that read: the prompt
// answered an error ("invalid params: ... the editor could not read"), as
// if the person had sent something wrong. It answers cancelled.
func TestACancelWhileAnAttachmentIsReadAnswersCancelled(t *testing.T) {
	w := newWorld(t)
	w.write("notes.txt", "some notes\n")
	c := w.connect(nil)
	c.initialize(map[string]any{"fs": map[string]any{"readTextFile": true}})
	reading := make(chan struct{})
	release := make(chan struct{})
	c.on(MethodReadTextFile, func(json.RawMessage) (any, error) {
		close(reading)
		<-release
		return nil, &jsonrpc2.Error{Code: -32603, Message: "request cancelled by the editor"}
	})
	sid := c.newSession()
	answered := make(chan error, 1)
	var res PromptResponse
	go func() {
		link := map[string]any{"type": "resource_link", "uri": "file://" + filepath.Join(w.ws, "notes.txt"), "name": "notes.txt"}
		answered <- c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("read this"), link}}, &res)
	}()
	<-reading
	c.notify(NotifySessionCancel, SessionIDRequest{SessionID: sid})
	c.call(MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "agent"}, nil) // the cancel was read
	close(release)
	if err := <-answered; err != nil || res.StopReason != StopCancelled {
		t.Fatalf("the stopped prompt answered %v %q, want stopReason cancelled", err, res.StopReason)
	}
}

// A second prompt, or a model change, while kin works on a prompt is
// refused in ACP's words: kin's message told the person to "wait for
// turn/completed", a notification of kin serve's that no ACP client knows.
func TestBusyRefusalsSpeakACP(t *testing.T) {
	w := newWorld(t)
	c := w.connect(nil)
	c.initialize(nil)
	sid := c.newSession()
	hold := make(chan struct{})
	w.model.Script(modeltest.Reply{Text: []string{"working ", "on it"}, Hold: hold})
	answered := make(chan error, 1)
	go func() {
		answered <- c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("first")}}, nil)
	}()
	w.model.WaitRequests(1, 30*time.Second)
	for name, err := range map[string]error{
		"prompt":    c.tryCall(MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("second")}}, nil),
		"set_model": c.tryCall(MethodSessionSetModel, map[string]any{"sessionId": sid, "modelId": "gpt-5.1"}, nil),
	} {
		if err == nil || strings.Contains(err.Error(), "turn/") || !strings.Contains(err.Error(), "prompt") {
			t.Errorf("%s while a prompt runs: %v", name, err)
		}
	}
	close(hold)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
}
