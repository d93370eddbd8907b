package connect_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/sendonce/resettest"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

func TestHTTPConnects(t *testing.T) {
	d := mcptest.NewDocs()
	url := mcptest.ServeHTTP(t, d.Server)
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("docs", url, nil), connect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := text(t, c.Session, "query-docs"); got != "docs for hi" {
		t.Fatalf("got %q", got)
	}
}

func TestHTTPRedirectRefused(t *testing.T) {
	var hits atomic.Int64
	target := mcptest.ServeHTTPHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	redirector := mcptest.ServeHTTPHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/mcp", http.StatusFound)
	}))
	srv := mcptest.HTTPConfig("r", redirector.URL, map[string]string{"Authorization": "Bearer s3cret-token"})
	_, err := connect.Dial(context.Background(), srv, connect.Options{})
	if err == nil {
		t.Fatal("connected through a redirect")
	}
	if !strings.Contains(err.Error(), "redirect") {
		t.Errorf("error %q does not mention the redirect", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("redirect target saw %d requests", n)
	}
}

func TestHTTPSOnly(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://example.com/mcp":      true,
		"http://localhost:1/mcp":       true,
		"http://127.0.0.1:1/mcp":       true,
		"http://[::1]:1/mcp":           true,
		"http://example.com/mcp":       false,
		"http://10.0.0.1/mcp":          false,
		"ftp://localhost/mcp":          false,
		"/relative":                    false,
		"http://localhost.evil.com/mc": false,
	} {
		if err := connect.CheckURL(url); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", url, err, ok)
		}
	}
	_, err := connect.Dial(context.Background(), mcptest.HTTPConfig("x", "http://example.com/mcp", nil), connect.Options{})
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Kind != connect.KindConfig {
		t.Fatalf("plain http to a remote host: %v", err)
	}
}

func TestHTTPRejectedCredentialsNotEchoed(t *testing.T) {
	const secret = "sk-canary-7f3a9"
	ts := mcptest.ServeHTTPHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad key "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	srv := mcptest.HTTPConfig("api", ts.URL+"/mcp?key="+secret, map[string]string{"Authorization": "Bearer " + secret})
	_, err := connect.Dial(context.Background(), srv, connect.Options{})
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Kind != connect.KindAuth {
		t.Fatalf("err = %v, want auth", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("secret in error: %q", err)
	}
	if !strings.Contains(err.Error(), "rejected the configured credentials (HTTP 401)") || !strings.Contains(err.Error(), `"auth": "oauth"`) {
		t.Errorf("error should explain the 401 and where OAuth is turned on: %q", err)
	}
}

func TestHTTPOversizedReply(t *testing.T) {
	raw := &mcptest.Raw{ReplyBytes: connect.MaxMessage + 10}
	ts := mcptest.ServeHTTPHandler(t, raw)
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("big", ts.URL, nil), connect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if err == nil || errors.As(err, &werr) {
		t.Fatalf("oversized reply: err = %v", err)
	}
	if raw.Calls.Load() != 1 {
		t.Fatalf("server saw %d calls", raw.Calls.Load())
	}
}

func TestListingsBypassCache(t *testing.T) {
	d := mcptest.NewDocs()
	url := mcptest.ServeHTTP(t, d.Server)
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("docs", url, nil), connect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 2; i++ {
		res, err := c.Session.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.TTLMs != 0 {
			t.Fatalf("listing kept a TTL of %d", res.TTLMs)
		}
	}
}

func TestRedactor(t *testing.T) {
	srv := mcptest.HTTPConfig("api", "https://u:pw-secret-1@example.com/mcp?token=qs-secret-2", map[string]string{"X-Api-Key": "hdr-secret-3"})
	srv.Env = map[string]string{"T": "env-secret-4"}
	r := connect.NewRedactor(srv)
	in := "dial https://u:pw-secret-1@example.com/mcp?token=qs-secret-2 failed; key hdr-secret-3 env env-secret-4 pw-secret-1 qs-secret-2"
	out := r.String(in)
	for _, s := range []string{"pw-secret-1", "qs-secret-2", "hdr-secret-3", "env-secret-4"} {
		if strings.Contains(out, s) {
			t.Errorf("%s survived: %q", s, out)
		}
	}
}

// A server (or a proxy before it) that resets each HTTP/2 stream once the
// request arrived: Go's transport on its own sends the same request again
// and again (a tools/call's side effects as often); kin sends each request
// (server/discover, initialize, the cancel) once.
func TestHTTPRequestThatArrivedIsNotSentAgain(t *testing.T) {
	s := resettest.New(t)
	// The resets end the connect at once; the bound is only a guard (a
	// request cut by it on a loaded machine would be sent, not arrived).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sent := &countingTransport{base: resettest.Transport()}
	_, err := connect.Dial(ctx, mcptest.HTTPConfig("reset", s.URL()+"/mcp", nil), connect.Options{HTTPTransport: sent, Timeout: time.Minute})
	if err == nil {
		t.Fatal("connected to a server that resets every stream")
	}
	if n, want := s.Arrived(), int(sent.n.Load()); n != want || want == 0 {
		t.Fatalf("%d requests arrived for the %d kin sent (%v)", n, want, err)
	}
}

// countingTransport counts the requests handed to it: each one kin sent
// (the HTTP/2 transport's own resends happen within one RoundTrip).
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}
