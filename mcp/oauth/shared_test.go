package oauth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/oauth"
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

// TestALogoutIsNotUndoneByAnotherProcess: the person signs kin out of a
// server in one editor window (mcp/logout forgets the stored sign-in; the
// provider offers no revocation, as many do not), while another kin on the
// same KIN_HOME still holds the sign-in in memory. At its next renewal that
// kin wrote the renewed sign-in back to the file: the logout was undone,
// and every later launch signed in silently again. A renewal must not
// bring back a sign-in the file no longer has; the other kin asks the
// person instead.
func TestALogoutIsNotUndoneByAnotherProcess(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second, NoRevocation: true}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	h := newHost(t)
	cs := mustConnect(t, w.manager(h), s)
	whoami(t, cs)

	if err := w.manager(refuseHost{t}).Logout(s); err != nil {
		t.Fatal(err)
	}
	h.open = func(context.Context, oauth.SignIn) error { return errors.New("the person declines") }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if tok := accessToken(w.record(t, s)); tok != "" {
		t.Errorf("the sign-in is back in the file after the logout (counts %+v)", w.as.Counts())
	}
	if len(h.SignIns()) != 2 {
		t.Errorf("sign-ins asked: %d, want the person asked again", len(h.SignIns()))
	}
}
