package oauth

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/config"
)

// errRedirect is a refused redirect.
var errRedirect = errors.New("the server answered with a redirect, which kin does not follow")

// defaultHTTPClient is the client for the authorization server when kin
// passes none: redirects refused, every request bounded to 30 s. Its
// transport has no custom dialer, so go-sdk's discovery keeps its guard
// against private and link-local addresses. Response bodies are bounded by
// the libraries (1 MiB for metadata, registration and token answers).
func defaultHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = nil
	return &http.Client{
		Transport: t,
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errRedirect
		},
	}
}

// probe asks the MCP server, without a token, how it wants to be signed in
// to: a GET of the endpoint with the configured headers. A 401 or 403 is
// the answer (its WWW-Authenticate names the metadata); any other status
// means discovery goes by the well-known URLs, so it is reported as a 401
// without a challenge.
func (m *Manager) probe(ctx context.Context, s config.Server) (*http.Request, int, http.Header, error) {
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, 0, nil, &Error{Kind: KindConfig, Msg: "the server url cannot be used"}
	}
	for k, v := range s.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	c := &http.Client{
		Transport: m.client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errRedirect
		},
	}
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, errRedirect) {
			return nil, 0, nil, &Error{Kind: KindDiscovery, Msg: errRedirect.Error()}
		}
		return nil, 0, nil, &Error{Kind: KindDiscovery, Msg: "could not reach the server: " + visible.Cut(safeCause(err), 200)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	// The request given to the flow carries no credential and no context
	// that ends with the probe.
	out, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, s.URL, nil)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		if resp.StatusCode == http.StatusForbidden {
			// A fresh sign-in, not a step-up.
			return out, http.StatusUnauthorized, resp.Header.Clone(), nil
		}
		return out, resp.StatusCode, resp.Header.Clone(), nil
	}
	return out, http.StatusUnauthorized, http.Header{}, nil
}

// loopbackHost reports localhost or a loopback address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// queryValues lists a URL's credentials (query values, userinfo) for the
// scrubber.
func queryValues(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		}
	}
	return out
}
