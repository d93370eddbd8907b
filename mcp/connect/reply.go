package connect

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kin-dev/kin/agent/visible"
)

// Results kin does not understand are never a success.
//
// Every result of the 2026-07-28 protocol carries a resultType. go-sdk
// knows "complete" and "input_required" and decodes anything else (a
// Tasks-extension "task", a discriminator of a later revision) into the
// method's ordinary result, empty, without an error: a tool call a server
// turned into a task would look like it succeeded and returned nothing.
// So every response is looked at on its way in, before the SDK decodes it
// (a stdio line, an HTTP body or event), and one whose resultType kin does
// not handle is turned into a JSON-RPC error with CodeUnhandledResult
// naming it. Its raw result is kept, under a random key only this process
// knows, for UnhandledResult to hand back (a task's id and status); a
// server sending that code itself gets an ordinary server error, never a
// kept result.

// CodeUnhandledResult is the code of the error a response with an
// unhandled resultType becomes. Only UnhandledResult can tell a real one
// from a server's imitation.
const CodeUnhandledResult = -32090

// Unhandled is a response whose resultType kin does not handle.
type Unhandled struct {
	// Method is the request's method ("" when kin could not tell).
	Method string
	// ResultType is the resultType as the server wrote it (clipped).
	ResultType string
	// Result is the raw result.
	Result json.RawMessage
}

// unhandledKey is the member of the error's data holding the kept key.
const unhandledKey = "kin/unhandledResult"

// maxKept bounds the unhandled results of one connection kept and not yet
// taken.
const maxKept = 256

// kept holds the unhandled results not yet taken, by random key, and each
// connection's keys (its owner: the connection's *PropertyOrder), oldest
// first. A reply to no request of kin's is kept too (a stdio reply's
// request may be forgotten, see methods) and never taken: the bound is per
// connection, so that one server's flood of them pushes out only its own
// replies, never the task another server's call became before calltool
// took it; and a closed connection's go with it (forgetKept).
var kept struct {
	mu    sync.Mutex
	byKey map[string]keptReply
	order map[any][]string
}

type keptReply struct {
	u     *Unhandled
	owner any
}

func keep(owner any, u *Unhandled) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	key := hex.EncodeToString(b[:])
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if kept.byKey == nil {
		kept.byKey, kept.order = map[string]keptReply{}, map[any][]string{}
	}
	kept.byKey[key] = keptReply{u: u, owner: owner}
	keys := append(kept.order[owner], key)
	for len(keys) > maxKept {
		delete(kept.byKey, keys[0])
		keys = keys[1:]
	}
	kept.order[owner] = keys
	return key
}

// forgetKept drops what a closed connection left kept: nothing takes it.
func forgetKept(owner any) {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	for _, k := range kept.order[owner] {
		delete(kept.byKey, k)
	}
	delete(kept.order, owner)
}

// UnhandledResult returns the response behind err when err is the error
// an unhandled resultType became (and takes it: a second call finds
// nothing). An error a server sent with CodeUnhandledResult itself is not
// one.
func UnhandledResult(err error) (*Unhandled, bool) {
	var werr *jsonrpc.Error
	if err == nil || !errors.As(err, &werr) || werr.Code != CodeUnhandledResult {
		return nil, false
	}
	var data map[string]string
	if json.Unmarshal(werr.Data, &data) != nil || data[unhandledKey] == "" {
		return nil, false
	}
	key := data[unhandledKey]
	kept.mu.Lock()
	defer kept.mu.Unlock()
	r, ok := kept.byKey[key]
	if !ok {
		return nil, false
	}
	delete(kept.byKey, key)
	keys := kept.order[r.owner]
	if i := slices.Index(keys, key); i >= 0 {
		keys = slices.Delete(keys, i, i+1)
	}
	if len(keys) == 0 {
		delete(kept.order, r.owner)
	} else {
		kept.order[r.owner] = keys
	}
	return r.u, true
}

// inputRequired are the methods whose results may ask for input (multi
// round-trip requests), the only ones that may say "input_required".
var inputRequired = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// handled reports whether kin handles resultType rt on a result of method.
func handled(rt, method string) bool {
	switch rt {
	case "", "complete":
		return true
	case "input_required":
		return method == "" || inputRequired[method]
	}
	return false
}

// methods remembers the method of each request kin sent, by id, for the
// replies (stdio: a reply carries only the id).
type methods struct {
	mu   sync.Mutex
	byID map[string]string
}

const maxPending = 1024

func (m *methods) sent(id json.RawMessage, method string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = map[string]string{}
	}
	if len(m.byID) >= maxPending { // replies that never came; forget them
		clear(m.byID)
	}
	m.byID[string(id)] = method
}

func (m *methods) answered(id json.RawMessage) string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	meth := m.byID[string(id)]
	delete(m.byID, string(id))
	return meth
}

// sentWriter is a stdio server's stdin: each message written is looked at
// for a request's id and method.
type sentWriter struct {
	w io.Writer
	m *methods
}

func (s *sentWriter) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &req) == nil && len(req.ID) > 0 && req.Method != "" {
			s.m.sent(req.ID, req.Method)
		}
	}
	return s.w.Write(p)
}

func (s *sentWriter) Close() error {
	if c, ok := s.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// checkReply returns msg (one JSON-RPC message) as the SDK should see it:
// unchanged, or, when it is a response whose resultType kin does not
// handle, an error response with the same id. method names the request's
// method when the caller knows it ("" asks m, which may be nil); owner is
// the connection (its *PropertyOrder), whose replies are kept apart.
func checkReply(msg []byte, method string, m *methods, owner any) []byte {
	if !bytes.Contains(msg, []byte(`"resultType"`)) {
		return msg // (its id stays in m until m is full: cheaper than parsing every reply)
	}
	var resp struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &resp) != nil || resp.Method != "" || len(resp.ID) == 0 || len(resp.Result) == 0 {
		return msg
	}
	if method == "" {
		method = m.answered(resp.ID)
	}
	var body struct {
		ResultType json.RawMessage `json:"resultType"`
	}
	if json.Unmarshal(resp.Result, &body) != nil {
		return msg // not an object: the SDK's decoding fails on it already
	}
	rt := ""
	if len(body.ResultType) > 0 && string(body.ResultType) != "null" {
		if json.Unmarshal(body.ResultType, &rt) != nil {
			rt = string(body.ResultType) // not a string: named as written
		}
	}
	if handled(rt, method) {
		return msg
	}
	rt = visible.Cut(rt, 40)
	key := keep(owner, &Unhandled{Method: method, ResultType: rt, Result: resp.Result})
	what := "a request"
	if method != "" {
		what = visible.Cut(method, 40)
	}
	data, _ := json.Marshal(map[string]string{unhandledKey: key})
	out, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      resp.ID,
		"error": jsonrpc.Error{
			Code:    CodeUnhandledResult,
			Message: fmt.Sprintf("the server answered %s with resultType %q, which kin does not handle", what, rt),
			Data:    data,
		},
	})
	if err != nil {
		return msg
	}
	if bytes.HasSuffix(msg, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// requestMethod is the JSON-RPC method of an HTTP request to the server:
// the SDK's Mcp-Method header (2026-07-28), else the body's.
func requestMethod(req *http.Request) string {
	if m := req.Header.Get(headerMethod); m != "" {
		return m
	}
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	var r struct {
		Method string `json:"method"`
	}
	if json.NewDecoder(io.LimitReader(body, MaxMessage)).Decode(&r) != nil {
		return ""
	}
	return r.Method
}

// replyBody is an HTTP response body as the SDK reads it, each message
// passed through checkReply: a JSON body whole, an event stream's data
// lines one by one.
type replyBody struct {
	rc     io.ReadCloser
	method string
	owner  any  // the connection (checkReply)
	events bool // text/event-stream
	r      *bufio.Reader
	out    []byte
	err    error
}

func newReplyBody(resp *http.Response, method string, owner any) io.ReadCloser {
	return &replyBody{rc: resp.Body, method: method, owner: owner, events: mediaType(resp) == "text/event-stream", r: bufio.NewReaderSize(resp.Body, 64<<10)}
}

func (b *replyBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		if !b.events {
			// One reply, already limited to MaxMessage (limitedBody).
			all, err := io.ReadAll(b.r)
			b.err = err
			if b.err == nil {
				b.err = io.EOF
			}
			if t := bytes.TrimSpace(all); len(t) > 0 && t[0] == '{' {
				all = checkReply(all, b.method, nil, b.owner)
			}
			b.out = all
			continue
		}
		line, err := b.line()
		b.err = err
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok && bytes.Contains(data, []byte(`"resultType"`)) {
			checked := checkReply(bytes.TrimSpace(data), b.method, nil, b.owner)
			line = append(append([]byte("data: "), checked...), '\n')
		}
		b.out = append(b.out[:0], line...)
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// line reads one line of an event stream, its newline included. A line
// longer than MaxMessage is passed on in pieces, unlooked at: the SDK's own
// limit on an event (MaxEventSize) refuses it.
func (b *replyBody) line() ([]byte, error) {
	var out []byte
	for {
		chunk, err := b.r.ReadSlice('\n')
		out = append(out, chunk...)
		if err == bufio.ErrBufferFull && len(out) <= MaxMessage {
			continue
		}
		if err == bufio.ErrBufferFull {
			err = nil // passed on in pieces, unlooked at
		}
		return out, err
	}
}

func (b *replyBody) Close() error { return b.rc.Close() }
