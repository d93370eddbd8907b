package oauth_test

import (
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

// TestTwoProcessesNeverSpendOneRefreshToken: two kin processes on one
// KIN_HOME (two editor windows) share a sign-in. Refresh tokens rotate, so
// once one process renewed, the refresh token the other holds in memory is
// spent; sending it again makes a provider with reuse detection revoke the
// whole sign-in, and the person is asked to sign in again (or, in a kin
// with nobody to ask, the server fails). A process must renew with what the
// shared file holds, and only one at a time.
func TestTwoProcessesNeverSpendOneRefreshToken(t *testing.T) {
	// 5 s tokens are due as soon as issued (oauth2 renews 10 s early), so
	// every call renews.
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second, RevokeOnReuse: true}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	first := w.manager(newHost(t))
	a := mustConnect(t, first, s)
	whoami(t, a)

	// The second process: nobody to sign in, only the stored sign-in.
	b := mustConnect(t, w.manager(refuseHost{t}), s)
	for range 3 {
		whoami(t, b)
		whoami(t, a)
	}
	if c := w.as.Counts(); c.Reuses != 0 || c.Authorizes != 1 {
		t.Errorf("counts = %+v: want no spent refresh token sent again and one sign-in", c)
	}
}

// TestRenewalNamesTheResource: the MCP spec wants the resource parameter
// (RFC 8707) in every token request, renewals included, so a token is
// bound to the server it is for. A renewal without it gets, from a
// provider with a default audience, a token for that audience: one the
// MCP server refuses (and one it could replay at the provider's other
// resources). kin must name the resource when it renews.
func TestRenewalNamesTheResource(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second, DefaultAudience: true}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	h := newHost(t)
	cs := mustConnect(t, w.manager(h), s)
	whoami(t, cs)
	whoami(t, cs) // due: renewed
	if c := w.as.Counts(); c.Refreshes == 0 || c.Authorizes != 1 {
		t.Errorf("counts = %+v: want renewals and one sign-in", c)
	}
	if got := accessToken(w.record(t, s)); w.as.Verify(got) == nil || w.as.Verify(got).Resource != w.rs.URL {
		t.Errorf("the renewed token is not bound to the MCP server: %+v", w.as.Verify(got))
	}
}
