package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

func TestFullSignInThenToolCall(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{AdvertiseIss: true}, oauthtest.ResourceOptions{Scopes: []string{"mcp"}})
	h := newHost(t)
	m := w.manager(h)
	s := w.server("notion", nil, nil)

	if st := m.Status(s); st.SignedIn || st.Auth != "oauth" || !st.EphemeralPort {
		t.Fatalf("status before sign-in = %+v", st)
	}
	if got := m.ConnectTimeout(s, 10*time.Second); got != oauth.SignInTimeout {
		t.Errorf("first connect budget = %v, want %v", got, oauth.SignInTimeout)
	}

	cs := mustConnect(t, m, s)
	if got := whoami(t, cs); got != "tenant=" {
		t.Errorf("whoami = %q", got)
	}

	// One sign-in, shown to the person, with PKCE S256, the resource and a
	// loopback redirect on an ephemeral port.
	signIns := h.SignIns()
	if len(signIns) != 1 {
		t.Fatalf("sign-ins shown = %d, want 1", len(signIns))
	}
	u := signIns[0].URL
	for param, want := range map[string]string{
		"code_challenge_method": "S256",
		"resource":              w.rs.URL,
		"response_type":         "code",
		"scope":                 "mcp",
	} {
		if got := oauthtest.Param(u, param); got != want {
			t.Errorf("authorize %s = %q, want %q", param, got, want)
		}
	}
	redirect := oauthtest.Param(u, "redirect_uri")
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") || !strings.HasSuffix(redirect, "/callback") || signIns[0].RedirectURI != redirect {
		t.Errorf("redirect_uri = %q (shown %q)", redirect, signIns[0].RedirectURI)
	}
	if signIns[0].Server != "notion" || !strings.Contains(signIns[0].Message, "Sign in to notion") {
		t.Errorf("sign-in = %+v", signIns[0])
	}
	if c := w.as.Counts(); c.Registrations != 1 || c.Authorizes != 1 || c.Exchanges != 1 {
		t.Errorf("counts = %+v", c)
	}
	deadline := time.Now().Add(time.Minute) // a guard against a hang
	for len(h.browser.Pages()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the browser reads the page after kin has the code
	}
	if pages := h.browser.Pages(); len(pages) != 1 || !strings.Contains(pages[0], "Signed in") {
		t.Errorf("callback page = %q", pages)
	}

	// Stored in one private file in a private folder.
	files := w.files(t)
	if len(files) != 1 || filepath.Base(files[0]) != oauth.EndpointKey(s)+".json" {
		t.Fatalf("files = %v", files)
	}
	fi, err := os.Stat(files[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	di, err := os.Stat(filepath.Join(w.home, oauth.DirName))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v (%v), want 0700", di.Mode().Perm(), err)
	}

	st := m.Status(s)
	if !st.SignedIn || !st.Renewable || !st.Registered || st.RedirectURI != redirect || st.EphemeralPort {
		t.Errorf("status after sign-in = %+v", st)
	}
	if got := m.ConnectTimeout(s, 10*time.Second); got != 10*time.Second {
		t.Errorf("later connect budget = %v", got)
	}
}

func TestRestartReusesRegistrationAndReconnectsSilently(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	first := w.manager(newHost(t))
	whoami(t, mustConnect(t, first, s))

	// A new launch: same KIN_HOME, and nobody to sign in.
	second := w.manager(refuseHost{t})
	whoami(t, mustConnect(t, second, s))
	if c := w.as.Counts(); c.Registrations != 1 || c.Authorizes != 1 {
		t.Errorf("after a silent reconnect counts = %+v, want one registration and one sign-in", c)
	}

	// The provider forgets the sign-in: the next launch signs in again,
	// with the stored registration (not a new one).
	w.as.RevokeAll()
	h := newHost(t)
	third := w.manager(h)
	whoami(t, mustConnect(t, third, s))
	if c := w.as.Counts(); c.Registrations != 1 || c.Authorizes != 2 {
		t.Errorf("after re-sign-in counts = %+v, want one registration and two sign-ins", c)
	}
	if len(h.SignIns()) != 1 {
		t.Errorf("sign-ins shown = %d", len(h.SignIns()))
	}
}

func TestRefreshWhenTheAccessTokenExpires(t *testing.T) {
	// oauth2 renews ten seconds before expiry: a 5 s token is due as soon as
	// it is issued, so every use renews it (and no test waits for a clock).
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	m := w.manager(newHost(t))
	cs := mustConnect(t, m, s)
	whoami(t, cs)
	before := w.as.Counts().Refreshes
	firstToken := accessToken(w.record(t, s))

	whoami(t, cs)
	c := w.as.Counts()
	if c.Refreshes <= before || c.Authorizes != 1 {
		t.Fatalf("counts = %+v (refreshes before %d): want a renewal, no new sign-in", c, before)
	}
	if got := accessToken(w.record(t, s)); got == firstToken || w.as.Verify(got) == nil {
		t.Error("the renewed token was not written back")
	}

	// A new launch uses the renewed sign-in silently.
	whoami(t, mustConnect(t, w.manager(refuseHost{t}), s))
}

func TestRejectedTokenIsRenewedNotSignedInAgain(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	h := newHost(t)
	m := w.manager(h)
	cs := mustConnect(t, m, s)
	whoami(t, cs)

	w.as.ExpireAccessTokens() // the server now answers 401 to the token
	whoami(t, cs)
	if c := w.as.Counts(); c.Refreshes != 1 || c.Authorizes != 1 {
		t.Errorf("counts = %+v, want one renewal and no new sign-in", c)
	}
	if len(h.SignIns()) != 1 {
		t.Errorf("sign-ins shown = %d", len(h.SignIns()))
	}
}

func TestRevokedRefreshTokenStartsAFreshSignIn(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	s := w.server("api", nil, nil)
	h := newHost(t)
	m := w.manager(h)
	cs := mustConnect(t, m, s)
	whoami(t, cs)
	old := accessToken(w.record(t, s))

	w.as.RevokeAll()
	whoami(t, cs) // 401, renewal refused (invalid_grant), sign-in, retry
	if c := w.as.Counts(); c.Authorizes != 2 || c.Registrations != 1 {
		t.Errorf("counts = %+v, want a second sign-in with the same registration", c)
	}
	if len(h.SignIns()) != 2 {
		t.Errorf("sign-ins shown = %d, want 2", len(h.SignIns()))
	}
	if got := accessToken(w.record(t, s)); got == old || w.as.Verify(got) == nil {
		t.Error("the fresh sign-in was not stored")
	}
}

func TestTenantsOnOneURLGetSeparateSignIns(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	h := newHost(t)
	m := w.manager(h)
	a := w.server("tenant-a", map[string]string{"X-Tenant": "a"}, nil)
	b := w.server("tenant-b", map[string]string{"X-Tenant": "b"}, nil)
	if oauth.EndpointKey(a) == oauth.EndpointKey(b) {
		t.Fatal("tenants share an endpoint key")
	}
	if got := whoami(t, mustConnect(t, m, a)); got != "tenant=a" {
		t.Errorf("tenant a: %q", got)
	}
	if got := whoami(t, mustConnect(t, m, b)); got != "tenant=b" {
		t.Errorf("tenant b: %q", got)
	}
	if len(w.files(t)) != 2 || len(h.SignIns()) != 2 {
		t.Errorf("files = %v, sign-ins = %d: want one of each per tenant", w.files(t), len(h.SignIns()))
	}
	if accessToken(w.record(t, a)) == accessToken(w.record(t, b)) {
		t.Error("tenants share a token")
	}
}

func TestEndpointKeyIgnoresSecretHeaders(t *testing.T) {
	base := config.Server{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"X-Tenant": "a"}}
	key := oauth.EndpointKey(base)
	for _, h := range []map[string]string{
		{"X-Tenant": "a", "Authorization": "Bearer one"},
		{"x-tenant": "a", "Authorization": "Bearer two", "Cookie": "c=1"},
		{"X-Tenant": "a", "X-Api-Key": "k1", "X-Auth-Token": "t", "X-Client-Secret": "s"},
	} {
		if got := oauth.EndpointKey(config.Server{URL: base.URL, Headers: h}); got != key {
			t.Errorf("headers %v changed the key", h)
		}
	}
	for _, s := range []config.Server{
		{URL: base.URL, Headers: map[string]string{"X-Tenant": "b"}},
		{URL: base.URL},
		{URL: "https://mcp.example.com/other", Headers: base.Headers},
	} {
		if oauth.EndpointKey(s) == key {
			t.Errorf("%v shares the key", s)
		}
	}
	for name, secret := range map[string]bool{
		"Authorization": true, "Cookie": true, "X-API-Key": true, "X-Token": true, "Client-Secret": true,
		"Proxy-Authorization": true, "X-Tenant": false, "X-Environment": false, "Accept-Language": false,
	} {
		if oauth.SecretHeader(name) != secret {
			t.Errorf("SecretHeader(%q) = %v", name, !secret)
		}
	}
}

func TestIssMismatchIsRejected(t *testing.T) {
	for _, advertise := range []bool{true, false} {
		t.Run(fmt.Sprintf("advertised=%v", advertise), func(t *testing.T) {
			w := newWorld(t, oauthtest.AuthOptions{AdvertiseIss: advertise, WrongIss: "https://evil.example.com"}, oauthtest.ResourceOptions{})
			s := w.server("api", nil, nil)
			m := w.manager(newHost(t))
			_, err := connect(context.Background(), t, m, s)
			if err == nil {
				t.Fatal("connect succeeded with a foreign iss")
			}
			if kindOf(err) != oauth.KindIssuer || !strings.Contains(err.Error(), "expected authorization server") {
				t.Errorf("err = %v (kind %q)", err, kindOf(err))
			}
			if w.as.Counts().Exchanges != 0 {
				t.Error("the code was exchanged despite the iss mismatch")
			}
			if m.Status(s).SignedIn {
				t.Error("a sign-in was stored")
			}
		})
	}
}

func TestNonLoopbackCallbackHostIsRefusedBeforeAnyRequest(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	m := w.manager(newHost(t))
	for _, host := range []string{"example.com", "192.168.1.10", "0.0.0.0"} {
		s := w.server("api", nil, &config.OAuth{CallbackHost: host, CallbackPort: 8765})
		_, err := m.Handler(s)
		if kindOf(err) != oauth.KindConfig || !strings.Contains(err.Error(), `"127.0.0.1" or "localhost"`) {
			t.Errorf("Handler with callbackHost %s: %v", host, err)
		}
		if err := m.Login(context.Background(), s); kindOf(err) != oauth.KindConfig {
			t.Errorf("Login with callbackHost %s: %v", host, err)
		}
		if st := m.Status(s); st.Problem == "" {
			t.Errorf("Status with callbackHost %s shows no problem", host)
		}
	}
	if total, _ := w.rs.Requests(); total != 0 || w.as.Counts() != (oauthtest.Counts{}) {
		t.Errorf("requests were made: server %d, authorization server %+v", total, w.as.Counts())
	}
	s := w.server("api", nil, &config.OAuth{CallbackHost: "localhost"})
	if _, err := m.Handler(s); err == nil || !strings.Contains(err.Error(), "requires oauth.callbackPort") {
		t.Errorf("localhost without a port: %v", err)
	}
}

func TestConcurrentSignInsAreCollapsed(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	h := newHost(t)
	h.browser.Before = func(string) error {
		time.Sleep(300 * time.Millisecond) // a person reading the consent screen
		return nil
	}
	m := w.manager(h)
	s := w.server("api", nil, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			cs, err := connect(context.Background(), t, m, s)
			if err == nil {
				cs.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("connect: %v", err)
		}
	}
	if n := len(h.SignIns()); n != 1 {
		t.Errorf("sign-ins shown = %d, want 1", n)
	}
	if c := w.as.Counts(); c.Registrations != 1 || c.Authorizes != 1 {
		t.Errorf("counts = %+v", c)
	}
}

func TestRegistrationRefusedNamesClientID(t *testing.T) {
	for name, ao := range map[string]oauthtest.AuthOptions{
		"404":             {RegistrationStatus: http.StatusNotFound},
		"400":             {RegistrationStatus: http.StatusBadRequest},
		"no registration": {NoRegistration: true},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, ao, oauthtest.ResourceOptions{})
			h := newHost(t)
			m := w.manager(h)
			s := w.server("entra", nil, nil)
			_, err := connect(context.Background(), t, m, s)
			if kindOf(err) != oauth.KindRegistration || !strings.Contains(err.Error(), "set oauth.clientId") ||
				!strings.Contains(err.Error(), "http://127.0.0.1:") {
				t.Errorf("err = %v", err)
			}
			if len(h.SignIns()) != 0 {
				t.Error("a sign-in URL was shown without a client")
			}
		})
	}
}

func TestConfiguredClientIDWithFixedPort(t *testing.T) {
	port := freePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	w := newWorld(t, oauthtest.AuthOptions{
		NoRegistration: true, ExactRedirectPort: true,
		Clients: []oauthtest.Client{{ID: "app-123", RedirectURIs: []string{redirect}, AuthMethod: "none"}},
	}, oauthtest.ResourceOptions{})
	h := newHost(t)
	m := w.manager(h)
	s := w.server("entra", nil, &config.OAuth{ClientID: "app-123", CallbackHost: "127.0.0.1", CallbackPort: port, Scopes: []string{"api.read", "offline_access"}})

	st := m.Status(s)
	if st.ClientID != "app-123" || st.RedirectURI != redirect || st.EphemeralPort || st.SignedIn {
		t.Errorf("status = %+v", st)
	}
	whoami(t, mustConnect(t, m, s))
	u := h.SignIns()[0].URL
	if oauthtest.Param(u, "client_id") != "app-123" || oauthtest.Param(u, "redirect_uri") != redirect {
		t.Errorf("authorize URL = %s", u)
	}
	got := strings.Fields(oauthtest.Param(u, "scope"))
	slices.Sort(got)
	if !slices.Equal(got, []string{"api.read", "offline_access"}) {
		t.Errorf("scope = %q, want the configured set exactly", got)
	}
	if w.as.Counts().Registrations != 0 {
		t.Error("registered although a client id is configured")
	}

	// A different client id in the configuration needs a new sign-in.
	s2 := s
	s2.OAuth = &config.OAuth{ClientID: "app-456", CallbackHost: "127.0.0.1", CallbackPort: port}
	if m.Status(s2).SignedIn {
		t.Error("a sign-in for app-123 counts for app-456")
	}
}

func TestLocalhostCallback(t *testing.T) {
	port := freePort(t)
	redirect := fmt.Sprintf("http://localhost:%d/callback", port)
	w := newWorld(t, oauthtest.AuthOptions{
		NoRegistration: true, ExactRedirectPort: true,
		Clients: []oauthtest.Client{{ID: "app-1", RedirectURIs: []string{redirect}, AuthMethod: "none"}},
	}, oauthtest.ResourceOptions{})
	h := newHost(t)
	v6 := make(chan error, 1)
	h.open = func(ctx context.Context, req oauth.SignIn) error {
		// The callback answers on ::1 as well (where the machine has it).
		if c, err := net.Dial("tcp6", fmt.Sprintf("[::1]:%d", port)); err == nil {
			c.Close()
			v6 <- nil
		} else {
			v6 <- err
		}
		return h.visit(ctx, req.URL)
	}
	m := w.manager(h)
	s := w.server("api", nil, &config.OAuth{ClientID: "app-1", CallbackHost: "localhost", CallbackPort: port})
	if got := m.Status(s).RedirectURI; got != redirect {
		t.Errorf("status redirect = %q", got)
	}
	whoami(t, mustConnect(t, m, s))
	if err := <-v6; err != nil {
		if l, lerr := net.Listen("tcp6", "[::1]:0"); lerr == nil {
			l.Close()
			t.Errorf("the localhost callback does not listen on ::1: %v", err)
		}
	}
}

func TestBusyCallbackPort(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	m := w.manager(newHost(t))
	s := w.server("api", nil, &config.OAuth{ClientID: "app", CallbackHost: "127.0.0.1", CallbackPort: port})
	_, err = connect(context.Background(), t, m, s)
	want := fmt.Sprintf("callback port %d is in use: free it, or change callbackPort and the registered redirect URI together", port)
	if kindOf(err) != oauth.KindCallback || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v", err)
	}
}

func TestRedirectMismatchTimesOutNamingTheURI(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{
		NoRegistration: true, ExactRedirectPort: true,
		Clients: []oauthtest.Client{{ID: "app", RedirectURIs: []string{"http://127.0.0.1:1/callback"}, AuthMethod: "none"}},
	}, oauthtest.ResourceOptions{})
	h := newHost(t)
	h.open = func(ctx context.Context, req oauth.SignIn) error {
		_ = h.visit(ctx, req.URL) // the provider's error page; the person gives up
		return nil
	}
	m := w.manager(h)
	s := w.server("api", nil, &config.OAuth{ClientID: "app", CallbackHost: "127.0.0.1"})
	// The person never comes back: the connect ends at this bound, long
	// enough for the sign-in to be shown first on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	_, err := connect(ctx, t, m, s)
	if len(h.SignIns()) == 0 {
		t.Fatalf("no sign-in shown: %v", err)
	}
	redirect := h.SignIns()[0].RedirectURI
	if kindOf(err) != oauth.KindTimeout || !strings.Contains(err.Error(), redirect) || !strings.Contains(err.Error(), "redirect URI mismatch") {
		t.Errorf("err = %v (redirect %s)", err, redirect)
	}
	if last := m.Status(s).LastError; !strings.Contains(last, redirect) {
		t.Errorf("status last error = %q", last)
	}
	if n := len(h.SignIns()); n != 1 {
		t.Errorf("sign-ins shown = %d, want 1 (the initialize fallback must not ask again)", n)
	}
}

func TestNoRefreshTokenTellsToAddTheScope(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{NoRefreshToken: true}, oauthtest.ResourceOptions{})
	h := newHost(t)
	m := w.manager(h)
	s := w.server("api", nil, nil)
	whoami(t, mustConnect(t, m, s))
	notices := h.Notices()
	if len(notices) != 1 || !strings.Contains(notices[0], "no refresh token") || !strings.Contains(notices[0], "offline_access") {
		t.Errorf("notices = %q", notices)
	}
	if st := m.Status(s); !st.SignedIn || st.Renewable {
		t.Errorf("status = %+v", st)
	}
}

func TestExpiredSignInWithoutRefreshAsksAgainAndSaysWhy(t *testing.T) {
	// kin treats a token as expired 10 s before its expiry (as oauth2
	// does), so a 20 s token is usable for the first connect (10 s: a
	// loaded machine needs seconds for the sign-in, connect and call) and
	// expired soon after: the test waits for that, not for a fixed time.
	w := newWorld(t, oauthtest.AuthOptions{NoRefreshToken: true, AccessTTL: 20 * time.Second}, oauthtest.ResourceOptions{})
	h := newHost(t)
	m := w.manager(h)
	s := w.server("api", nil, nil)
	whoami(t, mustConnect(t, m, s))
	if n := len(h.SignIns()); n != 1 {
		t.Fatalf("%d sign-ins for the first connect", n)
	}
	for deadline := time.Now().Add(time.Minute); m.Status(s).SignedIn; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("an expired, unrenewable sign-in still counts as signed in")
		}
	}
	// Without a person, the connect fails with needs_login and the fix.
	_, err := connect(context.Background(), t, w.manager(nil), s)
	if kindOf(err) != oauth.KindNeedsLogin || !strings.Contains(err.Error(), "mcp/login") {
		t.Errorf("headless err = %v", err)
	}
	whoami(t, mustConnect(t, m, s))
	signIns := h.SignIns()
	if len(signIns) != 2 || !strings.Contains(signIns[1].Message, "offline_access") {
		t.Errorf("second sign-in = %+v", signIns)
	}
}

func TestLoginRestartsAndLogoutRevokes(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	h := newHost(t)
	m := w.manager(h)
	s := w.server("api", nil, nil)
	if err := m.Login(context.Background(), s); err != nil {
		t.Fatalf("login: %v", err)
	}
	first := accessToken(w.record(t, s))
	if err := m.Login(context.Background(), s); err != nil {
		t.Fatalf("second login: %v", err)
	}
	if c := w.as.Counts(); c.Authorizes != 2 || c.Registrations != 1 {
		t.Errorf("counts = %+v", c)
	}
	if accessToken(w.record(t, s)) == first {
		t.Error("login kept the old token")
	}
	whoami(t, mustConnect(t, w.manager(refuseHost{t}), s))

	tok := accessToken(w.record(t, s))
	if err := m.Logout(s); err != nil {
		t.Fatal(err)
	}
	if m.Status(s).SignedIn || accessToken(w.record(t, s)) != "" {
		t.Error("logout kept the sign-in")
	}
	if w.as.Counts().Revocations == 0 || w.as.Verify(tok) != nil {
		t.Error("logout did not revoke the token")
	}
	if !m.Status(s).Registered {
		t.Error("logout dropped the registration")
	}
}

func TestStaticCredentialRejectedSaysOAuthIsAvailable(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	m := w.manager(newHost(t))
	s := config.Server{Name: "api", Scope: config.ScopeGlobal, Transport: config.TransportHTTP, URL: w.rs.URL,
		Headers: map[string]string{"Authorization": "Bearer stale-static-token"}}
	_, err := connect(context.Background(), t, m, s)
	if kindOf(err) != oauth.KindUnauthorized || !strings.Contains(err.Error(), `set "auth": "oauth"`) ||
		!strings.Contains(err.Error(), "offers OAuth sign-in") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), "stale-static-token") {
		t.Error("the static credential leaked into the error")
	}
	if st := m.Status(s); st != (oauth.StatusInfo{}) {
		t.Errorf("status of a non-oauth server = %+v", st)
	}
}

// TestSecretsNeverShow is the canary: every credential the authorization
// server handed out (tokens, codes, client secrets) must be absent from
// every log line, error, notice, sign-in message and status.
func TestSecretsNeverShow(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{AccessTTL: 5 * time.Second}, oauthtest.ResourceOptions{}) // due at once (see above)
	h := newHost(t)
	m := w.manager(h)
	s := w.server("api", nil, nil)
	var shown []string
	cs := mustConnect(t, m, s)
	whoami(t, cs)
	whoami(t, cs) // renewal
	w.as.ExpireAccessTokens()
	whoami(t, cs) // forced renewal
	w.as.RevokeAll()
	whoami(t, cs) // fresh sign-in

	st := m.Status(s)
	data, _ := json.Marshal(st)
	shown = append(shown, string(data), fmt.Sprintf("%+v %v", st, m))
	handler, _ := m.Handler(s)
	shown = append(shown, fmt.Sprintf("%v %+v", handler, handler))
	if ts, _ := handler.TokenSource(context.Background()); ts != nil {
		shown = append(shown, fmt.Sprintf("%v %+v", ts, ts))
	}
	for _, si := range h.SignIns() {
		shown = append(shown, si.Message)
	}
	shown = append(shown, h.Notices()...)

	// Failures too: a foreign iss, and a refused exchange.
	w2 := newWorld(t, oauthtest.AuthOptions{WrongIss: "https://evil.example.com"}, oauthtest.ResourceOptions{})
	m2 := oauth.New(oauth.Options{KinHome: w2.home, Host: newHost(t), Logger: w.logger})
	if _, err := connect(context.Background(), t, m2, w2.server("bad", nil, nil)); err != nil {
		shown = append(shown, err.Error())
	} else {
		t.Error("iss mismatch accepted")
	}
	if err := m.Logout(s); err != nil {
		shown = append(shown, err.Error())
	}
	shown = append(shown, allLogText(w.logs))

	secrets := append(w.as.Secrets(), w2.as.Secrets()...)
	if len(secrets) < 8 {
		t.Fatalf("only %d secrets issued; the canary would prove little", len(secrets))
	}
	all := strings.Join(shown, "\n")
	for _, sec := range secrets {
		if strings.Contains(all, sec) {
			t.Errorf("a credential (%.6s…) appears in what kin shows or logs", sec)
		}
	}
	if w.logs.Len() == 0 {
		t.Error("nothing was logged; the canary would prove little")
	}
}

func TestDeclinedSignIn(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	h := newHost(t)
	h.open = func(context.Context, oauth.SignIn) error { return errors.New("the person declined") }
	m := w.manager(h)
	_, err := connect(context.Background(), t, m, w.server("api", nil, nil))
	if kindOf(err) != oauth.KindDenied {
		t.Errorf("err = %v", err)
	}
	if n := len(h.SignIns()); n != 1 {
		t.Errorf("asked %d times, want once", n)
	}
}

func TestProviderDeniesConsent(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{Deny: true}, oauthtest.ResourceOptions{})
	m := w.manager(newHost(t))
	_, err := connect(context.Background(), t, m, w.server("api", nil, nil))
	if kindOf(err) != oauth.KindDenied || !strings.Contains(err.Error(), "access_denied") {
		t.Errorf("err = %v", err)
	}
}

// A caller that joined a sign-in whose own caller gave up (a connect that
// mcp/login stopped) runs a sign-in of its own instead of failing with the
// other caller's cancellation.
func TestJoinedAbandonedSignInStartsAgain(t *testing.T) {
	w := newWorld(t, oauthtest.AuthOptions{}, oauthtest.ResourceOptions{})
	h := newHost(t)
	shown := make(chan struct{}, 4)
	h.open = func(ctx context.Context, req oauth.SignIn) error {
		shown <- struct{}{}
		if len(h.SignIns()) == 1 {
			<-ctx.Done() // nobody answers the first link
			return ctx.Err()
		}
		return h.visit(ctx, req.URL)
	}
	m := w.manager(h)
	s := w.server("api", nil, nil)

	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	connected := make(chan error, 1)
	go func() {
		cs, err := connect(cctx, t, m, s)
		if err == nil {
			cs.Close()
		}
		connected <- err
	}()
	<-shown
	login := make(chan error, 1)
	go func() { login <- m.Login(context.Background(), s) }()
	time.Sleep(300 * time.Millisecond) // Login probes and joins the waiting sign-in
	cancel()
	if err := <-connected; err == nil {
		t.Error("the cancelled connect connected")
	}
	if err := <-login; err != nil {
		t.Fatalf("login after the connect gave up: %v", err)
	}
	if n := len(h.SignIns()); n != 2 {
		t.Errorf("sign-ins shown = %d, want 2", n)
	}
	if !m.Status(s).SignedIn {
		t.Error("not signed in")
	}
}
