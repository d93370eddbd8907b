// Package sendonce keeps an HTTP request that went out whole from being
// sent again by the transport beneath it.
//
// kin sends a model request, a hook's POST, once: it may have arrived and
// run, and sending it again would run it again. Go's HTTP/2 transport
// sends a request again on its own when the peer resets the stream with
// PROTOCOL_ERROR (or refuses it), rewinding the body with GetBody: against
// a service or a proxy that resets every stream that way, kin sent the
// same model request thousands of times a second. Transport refuses the
// rewind once the whole request was written; a rewind before that (a
// connection that died first: HTTP/1's nothing-written retry, a stream
// the peer never took) stays allowed, as nothing of it can have run.
package sendonce

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
)

// ErrMayHaveArrived ends a request whose connection failed after all of it
// was sent: the peer may have it, so it is not sent again.
var ErrMayHaveArrived = errors.New("the connection failed after the whole request was sent, so it may have arrived; kin does not send it again")

// Transport is base (nil: http.DefaultTransport) sending each request at
// most once past its last byte.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return once{base}
}

type once struct{ base http.RoundTripper }

func (o once) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody == nil {
		return o.base.RoundTrip(req)
	}
	var wrote atomic.Bool
	ctx := httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
		}
	}})
	out := req.WithContext(ctx)
	get := req.GetBody
	out.GetBody = func() (io.ReadCloser, error) {
		if wrote.Load() {
			return nil, ErrMayHaveArrived
		}
		return get()
	}
	return o.base.RoundTrip(out)
}
