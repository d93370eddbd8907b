package connect

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kin-dev/kin/agent/sendonce"
)

// ErrRedirect is the error a refused redirect becomes.
var ErrRedirect = errors.New("the server answered with a redirect, which kin does not follow")

// ErrTooLarge is returned when a response or message exceeds MaxMessage.
var ErrTooLarge = fmt.Errorf("the server's response exceeded %d bytes", MaxMessage)

// CheckURL accepts an absolute https URL, or plain http to localhost or a
// loopback address. Its messages never quote the URL.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return errors.New("the url is not an absolute http(s) URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("plain http is allowed only to localhost or a loopback address; use https")
	}
	return errors.New("the url scheme must be https (or http to localhost)")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpStats records what the guarded transport saw.
type httpStats struct {
	lastAuthStatus atomic.Int32 // last 401/403 seen, 0 after a success

	// mu guards challenge.
	mu        sync.Mutex
	challenge http.Header // the WWW-Authenticate of the last 401/403
}

// auth returns the last 401/403 status and its WWW-Authenticate header.
func (s *httpStats) auth() (int, http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.lastAuthStatus.Load()), s.challenge.Clone()
}

// newHTTPClient returns the client for one server: configured headers added
// to every request, redirects refused, POST response bodies limited. For an
// OAuth server (oauth set) a configured Authorization header never replaces
// the bearer token the OAuth handler put on a request. The list-change
// subscription request is watched for l (see roundTripListen).
func newHTTPClient(base http.RoundTripper, headers map[string]string, oauth bool, stats *httpStats, l *listen, order *PropertyOrder) *http.Client {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	// A request that went out whole may have run (a tools/call): HTTP/2
	// would send it again on its own when the stream is reset; never.
	base = sendonce.Transport(base)
	return &http.Client{
		Transport: &guardTransport{base: base, headers: headers, oauth: oauth, stats: stats, listen: l, order: order},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return ErrRedirect
		},
	}
}

// guardTransport adds the configured headers and limits response bodies.
type guardTransport struct {
	base    http.RoundTripper
	headers map[string]string
	oauth   bool // the server signs in with OAuth
	stats   *httpStats
	listen  *listen
	order   *PropertyOrder // sees every line of every body
}

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	for k, v := range t.headers {
		if t.oauth && strings.EqualFold(k, "Authorization") && req.Header.Get("Authorization") != "" {
			// The OAuth handler's bearer token wins over a configured
			// Authorization header, which is sent only without one.
			continue
		}
		r.Header.Set(k, v)
	}
	// (The SDK's header, not one a configuration could have set.)
	listenReq := req.Method == http.MethodPost && req.Header.Get(headerMethod) == methodListen && t.listen != nil
	var resp *http.Response
	var err error
	if listenReq {
		resp, err = t.roundTripListen(r)
	} else {
		resp, err = t.base.RoundTrip(r)
	}
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		t.stats.mu.Lock()
		t.stats.lastAuthStatus.Store(int32(resp.StatusCode))
		t.stats.challenge = http.Header{"Www-Authenticate": resp.Header.Values("WWW-Authenticate")}
		t.stats.mu.Unlock()
	default:
		if resp.StatusCode < 300 {
			t.stats.lastAuthStatus.Store(0)
		}
	}
	// The GET stream lives as long as the session, the list-change
	// subscription's as long as the subscription; their events are limited
	// one by one (MaxEventSize). Every other body is one reply.
	if req.Method != http.MethodGet && !(listenReq && mediaType(resp) == "text/event-stream") {
		resp.Body = &limitedBody{rc: resp.Body, left: MaxMessage}
	}
	// Before the SDK decodes a reply: a resultType kin does not handle
	// becomes an error (reply.go).
	method := ""
	if req.Method == http.MethodPost {
		method = requestMethod(req)
	}
	resp.Body = newReplyBody(resp, method, t.order)
	if t.order != nil {
		resp.Body = &orderBody{rc: resp.Body, order: t.order}
	}
	return resp, nil
}

// limitedBody fails a read once more than the limit has been read.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return 0, ErrTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
