package connect_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

func whoami(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("whoami: %v %+v", err, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// browserHost shows each sign-in URL to a test browser, which follows it
// to the loopback callback.
type browserHost struct{ b *oauthtest.Browser }

func (h browserHost) OpenURL(ctx context.Context, req oauth.SignIn) error {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return h.b.Visit(bctx, req.URL)
}

func (browserHost) Notice(string, string) {}

// authRecorder records the Authorization header of every request sent to
// the MCP server.
type authRecorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *authRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.sent = append(r.sent, req.Header.Get("Authorization"))
	r.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func (r *authRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// A configured static Authorization header on an OAuth server goes out only
// on a request without a token; it never replaces the OAuth bearer token.
func TestOAuthBearerIsNotOverwrittenByConfiguredAuthorization(t *testing.T) {
	const static = "Bearer static-header-value-1234"
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	m := oauth.New(oauth.Options{KinHome: t.TempDir(), Host: browserHost{&oauthtest.Browser{}}})
	srv := mcptest.HTTPConfig("api", rs.URL, map[string]string{"Authorization": static, "X-Tenant": "acme"})
	srv.Auth = "oauth"
	rec := &authRecorder{}
	opts := connect.Options{OAuthHandler: m.Handler, HTTPTransport: rec, Timeout: m.ConnectTimeout(srv, connect.ConnectTimeout)}
	if opts.Timeout != oauth.SignInTimeout {
		t.Errorf("first connect timeout %s, want %s", opts.Timeout, oauth.SignInTimeout)
	}

	c, err := connect.Dial(context.Background(), srv, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got := whoami(t, c.Session); got != "tenant=acme" {
		t.Errorf("whoami = %q", got)
	}
	c.Close()
	sent := rec.take()
	first := -1
	for i, a := range sent {
		if a != static && first < 0 {
			first = i
		}
		if first >= 0 && (a == static || as.Verify(strings.TrimPrefix(a, "Bearer ")) == nil) {
			t.Errorf("request %d after the sign-in carried %q, not a live OAuth token", i, a)
		}
	}
	if first != 1 {
		t.Errorf("want exactly one request with the static header (before the sign-in), got Authorization values %q", sent)
	}

	// Signed in: the next connect sends the stored token from the start.
	if d := m.ConnectTimeout(srv, connect.ConnectTimeout); d != connect.ConnectTimeout {
		t.Errorf("signed-in connect timeout %s", d)
	}
	_, unauthorized := rs.Requests()
	c, err = connect.Dial(context.Background(), srv, opts)
	if err != nil {
		t.Fatalf("second dial: %v", err)
	}
	whoami(t, c.Session)
	c.Close()
	for i, a := range rec.take() {
		if a == static || as.Verify(strings.TrimPrefix(a, "Bearer ")) == nil {
			t.Errorf("second connect, request %d: Authorization %q", i, a)
		}
	}
	if _, u := rs.Requests(); u != unauthorized {
		t.Errorf("the signed-in connect was refused %d times", u-unauthorized)
	}
	if n := as.Counts().Authorizes; n != 1 {
		t.Errorf("%d sign-ins, want 1", n)
	}
}

// Without an OAuth server flag the configured Authorization header is set
// on every request, as before.
func TestStaticAuthorizationStillSent(t *testing.T) {
	d := mcptest.NewDocs()
	url := mcptest.ServeHTTP(t, d.Server)
	rec := &authRecorder{}
	m := oauth.New(oauth.Options{KinHome: t.TempDir()})
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("docs", url, map[string]string{"Authorization": "Bearer k-123456789"}),
		connect.Options{HTTPTransport: rec, OAuthHandler: m.Handler})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, a := range rec.take() {
		if a != "Bearer k-123456789" {
			t.Errorf("Authorization %q", a)
		}
	}
}

// OAuth failures keep mcp/oauth's message and kind: a sign-in that cannot
// be shown is an auth failure, an entry that cannot sign in a config one,
// and a 401 from a server without "auth": "oauth" says OAuth is available.
func TestOAuthErrors(t *testing.T) {
	as := oauthtest.NewAuthServer(t, oauthtest.AuthOptions{})
	rs := oauthtest.NewResourceServer(t, as, oauthtest.ResourceOptions{})
	headless := oauth.New(oauth.Options{KinHome: t.TempDir()})

	srv := mcptest.HTTPConfig("api", rs.URL, nil)
	srv.Auth = "oauth"
	_, err := connect.Dial(context.Background(), srv, connect.Options{OAuthHandler: headless.Handler})
	var ce *connect.Error
	var oe *oauth.Error
	if !errors.As(err, &ce) || ce.Kind != connect.KindAuth || !errors.As(err, &oe) || oe.Kind != oauth.KindNeedsLogin {
		t.Fatalf("no front end: %v", err)
	}
	if !strings.Contains(err.Error(), "mcp/login") {
		t.Errorf("message %q", err)
	}

	bad := srv
	bad.OAuth = &config.OAuth{CallbackHost: "192.0.2.1"}
	_, err = connect.Dial(context.Background(), bad, connect.Options{OAuthHandler: headless.Handler})
	if !errors.As(err, &ce) || ce.Kind != connect.KindConfig || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("non-loopback callback: %v", err)
	}

	plain := mcptest.HTTPConfig("api", rs.URL, map[string]string{"Authorization": "Bearer wrong-token-value"})
	_, err = connect.Dial(context.Background(), plain, connect.Options{OAuthHandler: headless.Handler})
	if !errors.As(err, &ce) || ce.Kind != connect.KindAuth || !strings.Contains(err.Error(), `it offers OAuth sign-in: set "auth": "oauth"`) {
		t.Fatalf("static 401: %v", err)
	}
	if strings.Contains(err.Error(), "wrong-token-value") {
		t.Errorf("credential in %q", err)
	}
}
