package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/kin-dev/kin/mcp/config"
)

// handler is the auth.OAuthHandler of one oauth server. Every handler of
// an endpoint shares the endpoint's sign-in.
type handler struct {
	m  *Manager
	s  config.Server
	ep *endpoint
}

var _ auth.OAuthHandler = (*handler)(nil)

// String never shows a credential.
func (h *handler) String() string { return "oauth handler for " + h.s.Name }

// TokenSource returns the stored sign-in's token source, or nil when there
// is none (the request then goes without a token, and its 401 starts a
// sign-in through Authorize).
func (h *handler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if ts := h.m.source(h.ep, h.s); ts != nil {
		return ts, nil
	}
	return nil, nil
}

// Authorize runs after the server answered 401 or 403. It retries at once
// when the endpoint already has a newer token than the one the request
// carried (another connection signed in or renewed meanwhile), renews a
// rejected but renewable token, and otherwise signs in, collapsed with any
// sign-in of the same endpoint already running.
func (h *handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	status, header := resp.StatusCode, resp.Header.Clone()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()

	challenges, _ := oauthex.ParseWWWAuthenticate(header.Values("WWW-Authenticate"))
	if status == http.StatusForbidden && bearerParam(challenges, "error") != "insufficient_scope" {
		// Not a scope problem: signing in again would not help. (Mirrors
		// go-sdk: the retry gets the 403 again and the call fails.)
		return nil
	}
	sent := bearer(req)
	if ps := h.m.source(h.ep, h.s); ps != nil {
		if cur := ps.current(); cur != nil && cur.AccessToken != sent {
			return nil
		}
	}
	if status == http.StatusUnauthorized && sent != "" && h.m.forceRefresh(h.ep, h.s, sent) {
		return nil
	}
	return h.m.signIn(ctx, h.s, h.ep, signInArgs{req: req, status: status, header: header}, false)
}

// bearer is the access token a request carried ("" for none).
func bearer(req *http.Request) string {
	if req == nil {
		return ""
	}
	scheme, tok, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

func bearerParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params[name] != "" {
			return c.Params[name]
		}
	}
	return ""
}

// staticHandler is the handler of an http server that does not use OAuth:
// it sends no token and turns a 401 or 403 into an error that says what to
// do, including whether the server offers OAuth sign-in.
type staticHandler struct {
	hasHeaders bool
}

func (h *staticHandler) String() string { return "no-oauth handler" }

func (h *staticHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return nil, nil
}

func (h *staticHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return &Error{Kind: KindUnauthorized, Msg: ExplainUnauthorized(resp.StatusCode, resp.Header, h.hasHeaders)}
}

// ExplainUnauthorized is the message for a 401 or 403 from a server that is
// not configured for OAuth: it says whether the server offers OAuth sign-in
// (a Bearer challenge, or RFC 9728 resource_metadata) and how to turn it on.
func ExplainUnauthorized(status int, header http.Header, hasHeaders bool) string {
	cs, _ := oauthex.ParseWWWAuthenticate(header.Values("WWW-Authenticate"))
	offers := false
	for _, c := range cs {
		if c.Scheme == "bearer" || c.Params["resource_metadata"] != "" {
			offers = true
		}
	}
	what := fmt.Sprintf("the server requires authorization (HTTP %d)", status)
	if hasHeaders {
		what = fmt.Sprintf("the server rejected the configured credentials (HTTP %d)", status)
	}
	if status == http.StatusForbidden {
		what = "the server refused access (HTTP 403)"
		if hasHeaders {
			what = "the server refused access with the configured credentials (HTTP 403)"
		}
	}
	if offers {
		return what + `; it offers OAuth sign-in: set "auth": "oauth" on this server to sign in`
	}
	return what + `; check the configured headers, or set "auth": "oauth" if the server supports OAuth sign-in`
}
