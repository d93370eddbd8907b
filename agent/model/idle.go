package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/sendonce"
)

// IdleError ends a model request that received nothing for Timeout: the
// service did not answer, or went silent mid-answer. A hung service would
// otherwise keep a turn running until the person cancels it.
type IdleError struct {
	Timeout time.Duration
	// Phase says how far the answer had got: "connecting" (no response
	// headers yet), "headers" (headers, no body), "streaming" (mid-body).
	Phase string
}

func (e *IdleError) Error() string {
	d := e.Timeout.Round(time.Millisecond).String()
	if e.Timeout%time.Second == 0 {
		d = fmt.Sprintf("%d s", e.Timeout/time.Second)
	}
	what := fmt.Sprintf("the model service sent nothing for %v mid-answer", d)
	switch e.Phase {
	case "connecting":
		what = fmt.Sprintf("the model service did not answer within %v", d)
	case "headers":
		what = fmt.Sprintf("the model service accepted the request but then sent nothing for %v", d)
	}
	return what + "; kin stopped waiting and nothing was retried (the limit is modelIdleTimeoutSeconds in $KIN_HOME/settings.json)"
}

// idleTransport ends a request that makes no progress for idle: until the
// response headers arrive (connecting, sending the request, waiting for the
// service), and then while the body is read, between one byte and the next.
// Time spent by kin between reads (handing a delta to a slow editor, say)
// does not count: only waiting on the service does.
type idleTransport struct {
	base http.RoundTripper
	idle time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &idleWatch{idle: t.idle, cancel: cancel, phase: "connecting"}
	w.arm()
	out := req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		// sending the request is progress too: a large body on a slow link
		// must not look like a silent service (also a body the transport
		// rewound: base never rewinds one that went out whole, see idleClient)
		out.Body = &progressBody{rc: req.Body, w: w}
		if get := req.GetBody; get != nil {
			out.GetBody = func() (io.ReadCloser, error) {
				rc, err := get()
				if err != nil {
					return nil, err
				}
				return &progressBody{rc: rc, w: w}, nil
			}
		}
	}
	resp, err := t.base.RoundTrip(out)
	w.disarm()
	if err != nil {
		cause := w.fired()
		cancel(nil)
		if cause != nil {
			return nil, cause
		}
		return nil, err
	}
	w.mu.Lock()
	w.phase = "headers"
	w.mu.Unlock()
	resp.Body = &idleBody{rc: resp.Body, w: w}
	return resp, nil
}

// idleWatch is one request's timer. It runs only while kin waits on the
// service (armed), and cancels the request when it fires.
type idleWatch struct {
	idle   time.Duration
	cancel context.CancelCauseFunc

	// mu guards timer, armed, gen, phase and err.
	mu    sync.Mutex
	timer *time.Timer
	armed bool
	gen   int // counts armings, so a stale timer knows it is stale
	phase string
	err   *IdleError // set when the timer fired
}

// arm starts the timer afresh.
func (w *idleWatch) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.startLocked()
}

// touch restarts the timer if it runs (progress while waiting).
func (w *idleWatch) touch() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed {
		w.startLocked()
	}
}

func (w *idleWatch) startLocked() {
	if w.err != nil {
		return
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armed = true
	w.gen++
	gen := w.gen
	w.timer = time.AfterFunc(w.idle, func() { w.fire(gen) })
}

func (w *idleWatch) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.armed = false
}

// fire ends the request, unless the timer was stopped or restarted while
// it fired (then kin was not waiting that long).
func (w *idleWatch) fire(gen int) {
	w.mu.Lock()
	if !w.armed || gen != w.gen || w.err != nil {
		w.mu.Unlock()
		return
	}
	w.err = &IdleError{Timeout: w.idle, Phase: w.phase}
	err := w.err
	w.mu.Unlock()
	w.cancel(err)
}

// fired returns the error if the timer fired (nil otherwise).
func (w *idleWatch) fired() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil
	}
	return w.err
}

// progressBody is the request body; each read restarts the timer.
type progressBody struct {
	rc io.ReadCloser
	w  *idleWatch
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.touch()
	}
	return n, err
}

func (b *progressBody) Close() error { return b.rc.Close() }

// idleBody is the response body: the timer runs while a read waits.
type idleBody struct {
	rc   io.ReadCloser
	w    *idleWatch
	once sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.w.arm()
	n, err := b.rc.Read(p)
	b.w.disarm()
	if n > 0 {
		b.once.Do(func() {
			b.w.mu.Lock()
			b.w.phase = "streaming"
			b.w.mu.Unlock()
		})
	}
	if err != nil {
		if cause := b.w.fired(); cause != nil {
			return n, cause
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.w.disarm()
	err := b.rc.Close()
	b.w.cancel(nil)
	return err
}

// idleClient is a copy of hc (nil: the default client) whose transport
// ends requests idle for longer than idle (zero: DefaultIdleTimeout).
func idleClient(hc *http.Client, idle time.Duration) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	// a request that went out whole is never sent again (sendonce): the
	// HTTP/2 transport would resend it on a reset stream
	c.Transport = &idleTransport{base: sendonce.Transport(base), idle: idle}
	return c
}
