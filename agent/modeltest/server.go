package modeltest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBody bounds the request bodies the server reads.
const maxBody = 64 << 20

// Server is a scripted Responses API server. Its methods are safe for
// concurrent use.
type Server struct {
	ts        *httptest.Server
	done      chan struct{} // closed by Close; ends held and delayed streams
	closeOnce sync.Once

	mu      sync.Mutex
	queue   []Reply
	routes  []route
	rules   []Rule
	useRule bool          // rules were set (even an empty list)
	refuse  []string      // request parameters answered with 400
	reqs    []Request     // every request received
	arrived chan struct{} // closed and replaced when a request is recorded
	logw    io.Writer
}

// New starts a Server on a loopback port. Close stops it.
func New() *Server {
	s := newServer()
	s.ts = httptest.NewServer(s.handler())
	return s
}

// NewWithListener starts a Server that accepts connections from l, which it
// takes over (used by the mockmodel command). Close stops it.
func NewWithListener(l net.Listener) *Server {
	s := newServer()
	s.ts = httptest.NewUnstartedServer(s.handler())
	s.ts.Listener.Close()
	s.ts.Listener = l
	s.ts.Start()
	return s
}

func newServer() *Server {
	return &Server{done: make(chan struct{}), arrived: make(chan struct{})}
}

// URL returns the base URL including /v1, ready for OPENAI_BASE_URL or
// option.WithBaseURL.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Close ends open streams (including held ones) and stops the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// Script appends replies to the queue. Each request consumes the next one.
func (s *Server) Script(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// route is a conversation with a script of its own (see Route).
type route struct {
	match func(Request) bool
	queue []Reply
}

// Route gives the requests match picks a script of their own, consumed in
// order before the main script and the rules: a conversation told apart by
// its content (a subagent's, whose question is its task) gets its own
// replies however its requests interleave with others'. A request a route
// picks after its script ran out is answered 500 "modeltest: route has
// no more replies". Routes are tried in the order they were added.
func (s *Server) Route(match func(Request) bool, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.routes = append(s.routes, route{match: match, queue: replies})
}

// FirstUser matches a request whose conversation began with a user
// message containing substr: one conversation, from its first request to
// its last.
func FirstUser(substr string) func(Request) bool {
	return func(r Request) bool { return strings.Contains(r.FirstUserText(), substr) }
}

// SetRules sets the rules used when the script queue is empty; the first
// matching rule wins. With rules set (even an empty list), a request that no
// rule matches gets the text reply "mock: no rule for <last user text>"
// instead of an error. SetRules(nil) goes back to script-only mode, where an
// empty queue answers 500 "modeltest: no scripted reply".
func (s *Server) SetRules(rules []Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append([]Rule(nil), rules...)
	s.useRule = rules != nil
}

// RefuseParams makes the server answer every request that carries one of
// the named top-level parameters with HTTP 400 naming it, as a service
// without that feature does (a local server without reasoning, say). Such a
// request is recorded but consumes no reply: it never reached a model.
func (s *Server) RefuseParams(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = append([]string(nil), names...)
}

// SetLog makes the server write one line per request to w (nil: no log).
func (s *Server) SetLog(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logw = w
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// WaitRequests blocks until at least n requests have arrived or timeout has
// passed, and returns the requests received so far (fewer than n on timeout).
func (s *Server) WaitRequests(n int, timeout time.Duration) []Request {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		got, ch := len(s.reqs), s.arrived
		s.mu.Unlock()
		if got >= n {
			return s.Requests()
		}
		select {
		case <-ch:
		case <-timer.C:
			return s.Requests()
		}
	}
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.serveResponses)
	mux.HandleFunc("POST /responses", s.serveResponses)
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("POST /chat/completions", s.serveChat)
	// The model list, as OpenAI-compatible services answer it: what a health
	// check asks to see that the address is a model service.
	mux.HandleFunc("GET /v1/models", serveModels)
	mux.HandleFunc("GET /models", serveModels)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: http.StatusNotFound, typ: "invalid_request_error",
			message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	})
	return mux
}

// serveResponses answers one create-response request.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return
	}
	req, params, perr := parseRequest(body, r.Header.Get("Authorization"))
	s.serve(w, r, req, params, perr)
}

// serve answers a parsed request of either API: it records it, refuses
// what the server refuses, and otherwise plays the next reply.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, req Request, params map[string]any, perr *apiError) {
	s.mu.Lock()
	if perr == nil {
		for _, name := range s.refuse {
			if _, ok := params[name]; ok {
				perr = badRequest(name, "Unsupported parameter: '%s' is not supported with this model.", name)
				perr.code = "unsupported_parameter"
				break
			}
		}
	}
	s.reqs = append(s.reqs, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	var rep Reply
	var source string
	if perr == nil {
		rep, source, perr = s.nextReplyLocked(req)
	}
	logw := s.logw
	s.mu.Unlock()

	if logw != nil {
		status := rep.HTTPStatus
		if perr != nil {
			status = perr.status
		}
		fmt.Fprintf(logw, "modeltest: %s %s model=%q stream=%v %s -> %s status=%d\n",
			r.Method, r.URL.Path, req.Model, req.Stream, describeLast(req), source, max(status, 200))
	}
	if perr != nil {
		writeError(w, perr)
		return
	}
	if rep.Stall == StallBeforeHeaders {
		s.hold(r, nil)
		return
	}
	if rep.Recorded != nil {
		replay(w, rep.Recorded, rep.Piece)
		return
	}
	if rep.HTTPStatus != 0 && rep.HTTPStatus != http.StatusOK {
		if rep.RetryAfter > 0 {
			w.Header().Set("Retry-After-Ms", strconv.FormatInt(rep.RetryAfter.Milliseconds(), 10))
			secs := (rep.RetryAfter + time.Second - 1) / time.Second
			w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
		}
		if rep.ErrorBody != "" {
			ct := rep.ErrorContentType
			if ct == "" {
				ct = "text/plain; charset=utf-8"
			}
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(rep.HTTPStatus)
			_, _ = io.WriteString(w, rep.ErrorBody)
			return
		}
		e := statusError(rep.HTTPStatus, rep.ErrorMessage)
		if rep.ErrorParam != "" {
			e.param = rep.ErrorParam
		}
		if rep.ErrorCode != "" {
			e.code = rep.ErrorCode
		}
		writeError(w, e)
		return
	}
	var p plan
	if req.API == "chat" {
		p = buildChatPlan(req, params, rep)
	} else {
		p = buildPlan(req, params, rep)
	}
	if req.Stream {
		s.stream(w, r, p, rep)
	} else {
		s.answer(w, r, p, rep)
	}
}

// nextReplyLocked picks the reply for req: the script queue first, then the
// rules. It reports where the reply came from, for the log.
func (s *Server) nextReplyLocked(req Request) (Reply, string, *apiError) {
	for i := range s.routes {
		ro := &s.routes[i]
		if !ro.match(req) {
			continue
		}
		if len(ro.queue) == 0 {
			return Reply{}, "route", statusError(http.StatusInternalServerError, "modeltest: route has no more replies")
		}
		rep := ro.queue[0]
		ro.queue = ro.queue[1:]
		return rep, fmt.Sprintf("route %d", i), nil
	}
	if len(s.queue) > 0 {
		rep := s.queue[0]
		s.queue = s.queue[1:]
		return rep, "script", nil
	}
	if !s.useRule {
		return Reply{}, "empty queue", statusError(http.StatusInternalServerError, "modeltest: no scripted reply")
	}
	for i, ru := range s.rules {
		if ru.Matches(req) {
			return ru.Reply.Reply(), fmt.Sprintf("rule %d", i), nil
		}
	}
	return Reply{Text: SplitText("mock: no rule for "+req.LastUserText(), 3)}, "no rule", nil
}

// stream sends the planned events, applying the reply's stream faults.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p plan, rep Reply) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", newID("req"))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if rep.Stall == StallAfterHeaders {
		s.hold(r, nil)
		return
	}
	for i, ev := range p.events {
		if rep.DropAfter > 0 && i == rep.DropAfter {
			drop(rc)
			return
		}
		if i > 0 && rep.Delay > 0 && !s.sleep(r, rep.Delay) {
			return
		}
		if writeEvent(w, ev, i) != nil || rc.Flush() != nil {
			return
		}
		if i != p.holdAt {
			continue
		}
		if rep.Hold != nil && !s.hold(r, rep.Hold) {
			return
		}
		if rep.Stall == StallMidStream {
			s.hold(r, nil)
			return
		}
		if writeFault(w, rep) != nil || rc.Flush() != nil {
			return
		}
	}
	if rep.DropAfter > 0 {
		drop(rc)
	}
}

// answer sends the terminal response object as one JSON body, for requests
// without "stream": true.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, p plan, rep Reply) {
	if rep.Hold != nil && !s.hold(r, rep.Hold) {
		return
	}
	if rep.Stall != NoStall {
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		s.hold(r, nil)
		return
	}
	if rep.Delay > 0 && !s.sleep(r, rep.Delay) {
		return
	}
	if rep.DropAfter > 0 {
		drop(http.NewResponseController(w))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", newID("req"))
	_ = json.NewEncoder(w).Encode(p.final)
}

// replay sends a recorded HTTP response as it is: its status, its headers
// (but its framing: the server frames what it sends), and its body in
// pieces of piece bytes, each flushed, so a client meets every way a body
// can be split on the wire.
func replay(w http.ResponseWriter, recorded []byte, piece int) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(recorded)), nil)
	if err != nil {
		writeError(w, statusError(http.StatusInternalServerError, "modeltest: the recorded response does not parse: "+err.Error()))
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		writeError(w, statusError(http.StatusInternalServerError, "modeltest: the recorded body does not read: "+err.Error()))
		return
	}
	for k, vs := range resp.Header {
		if k == "Content-Length" || k == "Transfer-Encoding" || k == "Connection" {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	rc := http.NewResponseController(w)
	if piece <= 0 {
		piece = len(body)
	}
	for len(body) > 0 {
		n := min(piece, len(body))
		if _, err := w.Write(body[:n]); err != nil || rc.Flush() != nil {
			return
		}
		body = body[n:]
	}
}

// sleep waits d; false means the client went away or the server closed.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// hold waits until release is closed (forever when it is nil); false means
// the client went away or the server closed.
func (s *Server) hold(r *http.Request, release <-chan struct{}) bool {
	select {
	case <-release:
		return true
	case <-r.Context().Done():
	case <-s.done:
	}
	return false
}

// drop closes the connection abruptly, without ending the chunked body.
func drop(rc *http.ResponseController) {
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // aborts the response the same way
	}
	conn.Close()
}

// describeLast summarises the end of the input for the log.
func describeLast(req Request) string {
	if out, ok := req.LastToolOutput(); ok {
		return "tool_output=" + quoteShort(out)
	}
	if req.lastIsUserMessage() {
		return "user=" + quoteShort(req.LastUserText())
	}
	return fmt.Sprintf("items=%d", len(req.Input))
}

func quoteShort(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return strconv.Quote(s)
}

// apiError is an OpenAI-style error answer.
type apiError struct {
	status                    int
	message, typ, param, code string
}

func badRequest(param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param,
		message: fmt.Sprintf(format, args...)}
}

// statusError returns the error the API gives for status, with message if
// non-empty.
func statusError(status int, message string) *apiError {
	e := &apiError{status: status, typ: "invalid_request_error", message: message}
	var def string
	switch {
	case status == http.StatusUnauthorized:
		e.code, def = "invalid_api_key", "Incorrect API key provided."
	case status == http.StatusForbidden:
		def = "You are not allowed to make this request."
	case status == http.StatusNotFound:
		e.code, def = "model_not_found", "The model does not exist or you do not have access to it."
	case status == http.StatusTooManyRequests:
		e.typ, e.code, def = "requests", "rate_limit_exceeded", "Rate limit reached. Please try again later."
	case status == http.StatusServiceUnavailable:
		e.typ, def = "server_error", "The engine is currently overloaded, please try again later."
	case status >= 500:
		e.typ, def = "server_error", "The server had an error while processing your request. Sorry about that!"
	default:
		def = http.StatusText(status)
	}
	if e.message == "" {
		e.message = def
	}
	return e
}

func writeError(w http.ResponseWriter, e *apiError) {
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	body := map[string]any{"error": map[string]any{
		"message": e.message, "type": e.typ, "param": orNull(e.param), "code": orNull(e.code),
	}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Request-Id", newID("req"))
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(body)
}

// serveModels answers GET /v1/models with OpenAI's list shape.
func serveModels(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"mock","object":"model","created":0,"owned_by":"modeltest"}]}`)
}
