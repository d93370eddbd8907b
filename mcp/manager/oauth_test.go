package manager_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

// signInAnswer accepts a sign-in link and lets the test browser follow it
// to kin's loopback callback; any other elicitation is declined.
func signInAnswer(t *testing.T, b *oauthtest.Browser) func(manager.ElicitRequest) manager.ElicitResult {
	return func(r manager.ElicitRequest) manager.ElicitResult {
		if r.Mode != "url" || r.Purpose != "oauth" {
			t.Errorf("unexpected elicitation %+v", r)
			return manager.ElicitResult{Action: "decline"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := b.Visit(ctx, r.URL); err != nil {
			t.Errorf("browser: %v", err)
		}
		return manager.ElicitResult{Action: "accept"}
	}
}

func (h *host) elicitCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.elicits)
}

// An "auth": "oauth" server signs in on its first connect (the URL reaches
// the Host as a url elicitation of purpose oauth), reconnects silently from
// the stored sign-in, signs in again on Login and is signed out by Logout.
// No token reaches the Host, List or Check.
func TestOAuthSignInLifecycle(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	b := &oauthtest.Browser{}
	h := &host{answer: signInAnswer(t, b)}
	entry := map[string]any{"type": "http", "url": rs.URL, "auth": "oauth", "headers": map[string]string{"X-Tenant": "acme"}}
	m, home := setup(t, h, map[string]any{"api": entry}, nil)

	if err := m.Refresh(); err != nil {
		t.Fatal(err)
	}
	if r := state(m, "api"); r.OAuth == nil || r.OAuth.SignedIn || !strings.HasPrefix(r.OAuth.RedirectURI, "http://127.0.0.1:") {
		t.Errorf("row before sign-in: %+v", r.OAuth)
	}
	m.Start(context.Background())
	r := state(m, "api")
	if r.State != manager.StateConnected || r.Auth != "oauth" || r.OAuth == nil || !r.OAuth.SignedIn {
		t.Fatalf("after the first connect: %+v %+v", r, r.OAuth)
	}
	if n := h.elicitCount(); n != 1 {
		t.Fatalf("%d elicitations, want 1", n)
	}
	e := h.elicits[0]
	if e.Server != "api" || e.Message == "" || !strings.HasPrefix(e.URL, as.URL+"/authorize?") {
		t.Errorf("sign-in elicitation %+v", e)
	}
	if res := run(t, toolNamed(m, "mcp__api__whoami"), `{}`); res.Status != tool.StatusCompleted || !strings.Contains(res.Output, "tenant=acme") {
		t.Fatalf("whoami: %+v", res)
	}

	// A new Manager over the same KIN_HOME reconnects without asking.
	h2 := &host{}
	m2 := manager.New(manager.Options{Workdir: t.TempDir(), KinHome: home, Host: h2, Env: env(nil)})
	t.Cleanup(m2.Close)
	m2.Start(context.Background())
	if r := state(m2, "api"); r.State != manager.StateConnected {
		t.Fatalf("restart: %+v", r)
	}
	if h2.elicitCount() != 0 || h2.launchCount() != 0 {
		t.Errorf("restart asked: %d elicitations, %d launches", h2.elicitCount(), h2.launchCount())
	}
	m2.Close()

	// Login signs in again (a second authorization) and reconnects.
	if err := m.Login(context.Background(), "api"); err != nil {
		t.Fatalf("login: %v", err)
	}
	if r := state(m, "api"); r.State != manager.StateConnected || !r.OAuth.SignedIn {
		t.Fatalf("after login: %+v", r)
	}
	if n := as.Counts().Authorizes; n != 2 || h.elicitCount() != 2 {
		t.Errorf("authorizes %d, elicitations %d; want 2 and 2", n, h.elicitCount())
	}
	if res := run(t, toolNamed(m, "mcp__api__whoami"), `{}`); res.Status != tool.StatusCompleted {
		t.Fatalf("whoami after login: %+v", res)
	}

	// Logout ends the connection and forgets the sign-in.
	if err := m.Logout("api"); err != nil {
		t.Fatal(err)
	}
	if r := state(m, "api"); r.State != manager.StateNeedsLogin || r.OAuth.SignedIn || len(m.Tools()) != 0 {
		t.Fatalf("after logout: %+v %+v", r, r.OAuth)
	}
	c := m.Check(context.Background(), "api")
	if len(c) != 1 || c[0].Ready || !strings.Contains(c[0].Explanation, "api uses OAuth and has no stored sign-in: run mcp/login") {
		t.Errorf("check after logout: %+v", c)
	}

	rows, _ := json.Marshal(m.List())
	checks, _ := json.Marshal(c)
	for _, secret := range as.Secrets() {
		for what, s := range map[string]string{"host": h.all(), "host2": h2.all(), "list": string(rows), "check": string(checks)} {
			if strings.Contains(s, secret) {
				t.Errorf("credential %.6s… in %s", secret, what)
			}
		}
	}
}

// A declined sign-in leaves the server in needs_login with a message that
// says to run mcp/login; Login's errors say what is wrong.
func TestOAuthDeclinedAndLoginErrors(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	h := &host{} // declines every elicitation
	m, _ := setup(t, h, map[string]any{
		"api":   map[string]any{"type": "http", "url": rs.URL, "auth": "oauth"},
		"plain": map[string]any{"type": "http", "url": rs.URL},
	}, nil)
	m.Start(context.Background())
	r := state(m, "api")
	if r.State != manager.StateNeedsLogin || !strings.Contains(r.LastError, "run mcp/login") || !strings.Contains(r.LastError, "not started") {
		t.Fatalf("declined: %+v", r)
	}
	if n := h.elicitCount(); n != 1 {
		t.Errorf("a declined sign-in was asked %d times", n)
	}
	if len(h.noticesWith("MCP server api needs sign-in")) != 1 {
		t.Errorf("notices %v", h.notices)
	}
	c := m.Check(context.Background(), "api")
	if !strings.Contains(c[0].Explanation, "run mcp/login") {
		t.Errorf("check %+v", c)
	}
	// A server without "auth": "oauth" that gets a 401 says OAuth is offered.
	if p := state(m, "plain"); p.State != manager.StateNeedsLogin || !strings.Contains(p.LastError, `set "auth": "oauth"`) {
		t.Errorf("plain: %+v", p)
	}

	var oe *oauth.Error
	if err := m.Login(context.Background(), "plain"); !errors.As(err, &oe) || oe.Kind != oauth.KindConfig {
		t.Errorf("login to a non-OAuth server: %v", err)
	}
	if err := m.Login(context.Background(), "nope"); !errors.Is(err, manager.ErrUnknownServer) {
		t.Errorf("login to an unknown server: %v", err)
	}
	err := m.Login(context.Background(), "api")
	if !errors.As(err, &oe) || oe.Kind != oauth.KindDenied {
		t.Errorf("declined login: %v", err)
	}
	if r := state(m, "api"); r.State != manager.StateNeedsLogin {
		t.Errorf("after a declined login: %+v", r)
	}

	// The next Login, accepted, connects.
	h.mu.Lock()
	h.answer = signInAnswer(t, &oauthtest.Browser{})
	h.mu.Unlock()
	if err := m.Login(context.Background(), "api"); err != nil {
		t.Fatalf("login: %v", err)
	}
	if r := state(m, "api"); r.State != manager.StateConnected {
		t.Errorf("after login: %+v", r)
	}
}

// An oauth block with a changed scope set (or client id, callback) is a
// changed server: Apply reconnects it.
func TestOAuthBlockChangeReconnects(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	h := &host{answer: signInAnswer(t, &oauthtest.Browser{})}
	entry := map[string]any{"type": "http", "url": rs.URL, "oauth": map[string]any{"scopes": []string{"read"}}}
	m, home := setup(t, h, map[string]any{"api": entry}, nil)
	m.Start(context.Background())
	if r := state(m, "api"); r.State != manager.StateConnected {
		t.Fatalf("%+v", r)
	}
	before := len(h.statuses)
	if err := m.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(h.statuses) != before {
		t.Errorf("an unchanged oauth server was reconnected: %+v", h.statuses[before:])
	}
	entry["oauth"] = map[string]any{"scopes": []string{"read", "write"}}
	writeConfig(t, home, map[string]any{"api": entry})
	if err := m.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	reconnected := false
	for _, s := range h.statuses[before:] {
		reconnected = reconnected || s.State == manager.StateConnecting
	}
	if !reconnected {
		t.Errorf("changed scopes did not reconnect: %+v", h.statuses[before:])
	}
}
