package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ListenTimeout bounds the wait for a server's acknowledgement of the
// list-change subscription, unless Options.ListenTimeout says otherwise.
const ListenTimeout = 5 * time.Second

// Under the 2026-07-28 protocol (SEP-2575) a server sends list changes only
// on a subscriptions/listen stream the client opened, and its first message
// on that stream is notifications/subscriptions/acknowledged, naming the
// part of the requested filter it will honour. The SDK opens that stream
// inside Client.Connect (for each list whose change handler is set and
// whose listChanged the server advertises), fires it and forgets it: the
// acknowledgement goes to a no-op handler and the reply (an error, say) to
// nobody. kin watches both from outside:
//
//   - a sending middleware records what was requested (and starts the
//     clock),
//   - a receiving middleware records the acknowledgement,
//   - for http servers, the guarded transport sees the listen request's
//     reply: a refusal settles the question at once, and a server that
//     sends no reply at all is cut off after the bound (the SDK writes the
//     request synchronously inside Connect with a context that never ends,
//     so without the bound such a server would hang the connect forever).
const (
	methodListen    = "subscriptions/listen"
	notificationAck = "notifications/subscriptions/acknowledged"
	headerMethod    = "Mcp-Method" // set by the SDK on 2026-07-28 requests
)

// ListenReport says whether the server acknowledged the list-change
// subscription of a session.
type ListenReport struct {
	// Requested is what the SDK asked for. It is empty when no
	// subscription was opened: a session on an older protocol (which gets
	// list_changed notifications without asking), or a server that
	// advertises no list changes.
	Requested mcp.NotificationSubscriptions
	// Missing is the part of Requested the server did not acknowledge (its
	// lists will not refresh automatically); empty when all was.
	Missing mcp.NotificationSubscriptions
	// Problem says why Missing is not empty, in words that hold nothing
	// the server wrote.
	Problem string
}

// Acknowledged reports whether nothing requested is missing.
func (r ListenReport) Acknowledged() bool { return !anyList(r.Missing) }

// anyList reports whether n asks for any list's changes.
func anyList(n mcp.NotificationSubscriptions) bool {
	return n.ToolsListChanged || n.PromptsListChanged || n.ResourcesListChanged
}

// listen watches the subscription of one connection attempt.
type listen struct {
	timeout time.Duration
	settled chan struct{} // closed by settle
	once    sync.Once

	mu        sync.Mutex
	opened    bool
	requested mcp.NotificationSubscriptions
	timer     *time.Timer
	acked     *mcp.NotificationSubscriptions
	problem   string
}

func newListen(timeout time.Duration) *listen {
	if timeout <= 0 {
		timeout = ListenTimeout
	}
	return &listen{timeout: timeout, settled: make(chan struct{})}
}

// opening records the list-change subscription being sent (the first one
// only: later listens are resource subscriptions kin does not make).
func (l *listen) opening(n mcp.NotificationSubscriptions) {
	if !anyList(n) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opened {
		return
	}
	l.opened, l.requested = true, n
	l.timer = time.AfterFunc(l.timeout, func() {
		l.fail(fmt.Sprintf("no acknowledgement within %s", l.timeout))
	})
}

// acknowledged records the server's acknowledgement.
func (l *listen) acknowledged(n mcp.NotificationSubscriptions) {
	l.mu.Lock()
	if l.acked != nil || l.problem != "" {
		l.mu.Unlock()
		return
	}
	l.acked = &n
	l.mu.Unlock()
	l.settle()
}

// fail records why the subscription was not acknowledged (the first reason
// wins; an acknowledgement that came first stands).
func (l *listen) fail(problem string) {
	l.mu.Lock()
	if l.acked != nil || l.problem != "" {
		l.mu.Unlock()
		return
	}
	l.problem = problem
	l.mu.Unlock()
	l.settle()
}

func (l *listen) settle() {
	l.once.Do(func() {
		l.mu.Lock()
		if l.timer != nil {
			l.timer.Stop()
		}
		l.mu.Unlock()
		close(l.settled)
	})
}

// report describes the settled subscription.
func (l *listen) report() ListenReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := ListenReport{Requested: l.requested}
	if !l.opened {
		return r
	}
	if l.acked == nil {
		r.Missing = mcp.NotificationSubscriptions{
			ToolsListChanged:     l.requested.ToolsListChanged,
			PromptsListChanged:   l.requested.PromptsListChanged,
			ResourcesListChanged: l.requested.ResourcesListChanged,
		}
		r.Problem = l.problem
		return r
	}
	r.Missing = mcp.NotificationSubscriptions{
		ToolsListChanged:     l.requested.ToolsListChanged && !l.acked.ToolsListChanged,
		PromptsListChanged:   l.requested.PromptsListChanged && !l.acked.PromptsListChanged,
		ResourcesListChanged: l.requested.ResourcesListChanged && !l.acked.ResourcesListChanged,
	}
	if anyList(r.Missing) {
		r.Problem = "the acknowledgement left out part of the requested filter"
	}
	return r
}

// sending records the subscription the SDK opens.
func (l *listen) sending(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodListen {
			if p, ok := req.GetParams().(*mcp.SubscriptionsListenParams); ok && p != nil && p.Notifications != nil {
				l.opening(*p.Notifications)
			}
		}
		return next(ctx, method, req)
	}
}

// receiving records the acknowledgement; the SDK's own handler ignores it.
func (l *listen) receiving(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == notificationAck {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil {
				l.acknowledged(p.Notifications)
			}
		}
		return next(ctx, method, req)
	}
}

// Listen reports on the list-change subscription the SDK opened when the
// session was set up (nothing when it opened none). It waits until the
// server acknowledged or refused it, or until the bound
// (Options.ListenTimeout, counted from the request) has passed; when ctx
// or the session ends first it reports nothing missing.
func (c *Conn) Listen(ctx context.Context) ListenReport {
	l := c.listen
	l.mu.Lock()
	opened := l.opened
	l.mu.Unlock()
	if !opened {
		return ListenReport{}
	}
	select {
	case <-l.settled:
		r := l.report()
		r.Problem = c.red.String(r.Problem)
		return r
	case <-ctx.Done():
	case <-c.done:
	}
	return ListenReport{Requested: l.report().Requested}
}

// errListenUnanswered is what the SDK's listen request gets from a server
// that sent no reply within the bound.
var errListenUnanswered = errors.New("no reply to subscriptions/listen")

// roundTripListen sends a subscriptions/listen request: its reply must start
// within the bound, and a reply that is not an event stream is a refusal.
// The stream itself lives as long as the subscription, so it is not held to
// MaxMessage as a whole (the SDK limits each event to MaxMessage).
func (t *guardTransport) roundTripListen(r *http.Request) (*http.Response, error) {
	l := t.listen
	ctx, cancel := context.WithCancel(r.Context())
	timer := time.AfterFunc(l.timeout, cancel)
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if !timer.Stop() {
		// Cut off: whatever arrived meanwhile is too late.
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		l.fail(fmt.Sprintf("no reply to subscriptions/listen within %s", l.timeout))
		return nil, errListenUnanswered
	}
	if err != nil {
		cancel()
		l.fail("subscriptions/listen failed: the request did not reach the server")
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		// The OAuth handler may sign in and send it again; the bound
		// decides otherwise.
	case resp.StatusCode >= 300:
		code, _ := peekError(resp)
		l.fail(refusal(code, fmt.Sprintf("HTTP %d", resp.StatusCode)))
	case mediaType(resp) == "text/event-stream":
		// The acknowledgement arrives as the stream's first event.
	case mediaType(resp) == "application/json":
		// One message: the reply, so no stream and no acknowledgement.
		if code, isErr := peekError(resp); isErr {
			l.fail(refusal(code, ""))
		} else {
			l.fail("the server answered subscriptions/listen without opening a stream")
		}
	default:
		l.fail("the server answered subscriptions/listen with an unexpected content type")
	}
	return resp, nil
}

// refusal words a refused listen request: by its JSON-RPC error code (0:
// none known), or else by detail (an HTTP status, or "").
func refusal(code int64, detail string) string {
	switch {
	case code == -32601:
		return "the server does not support subscriptions/listen (method not found)"
	case code != 0:
		return fmt.Sprintf("the server refused subscriptions/listen (error %d)", code)
	case detail != "":
		return "the server refused subscriptions/listen (" + detail + ")"
	}
	return "the server refused subscriptions/listen"
}

// peekError reads a reply body (up to MaxMessage) and puts it back for the
// SDK. isErr reports a JSON-RPC error reply, code is its code.
func peekError(resp *http.Response) (code int64, isErr bool) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
	rest := resp.Body
	resp.Body = &limitedBody{rc: readCloser{io.MultiReader(bytes.NewReader(b), rest), rest}, left: MaxMessage}
	if err != nil || len(b) > MaxMessage {
		return 0, false
	}
	var msg struct {
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Error == nil {
		return 0, false
	}
	return msg.Error.Code, true
}

func mediaType(resp *http.Response) string {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt
}

// cancelBody ends the request's context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

type readCloser struct {
	io.Reader
	io.Closer
}
