package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/oauth/oauthtest"
)

// host is the front end: it "shows" a sign-in URL by letting a Browser
// visit it, and records what it was asked to show.
type host struct {
	t       testing.TB
	browser *oauthtest.Browser
	// open, when set, replaces the browser visit.
	open func(ctx context.Context, req oauth.SignIn) error

	// mu guards signIns and notices.
	mu      sync.Mutex
	signIns []oauth.SignIn
	notices []string
}

func newHost(t testing.TB) *host {
	return &host{t: t, browser: &oauthtest.Browser{}}
}

func (h *host) OpenURL(ctx context.Context, req oauth.SignIn) error {
	h.mu.Lock()
	h.signIns = append(h.signIns, req)
	h.mu.Unlock()
	if h.open != nil {
		return h.open(ctx, req)
	}
	return h.visit(ctx, req.URL)
}

// visit lets the browser load u in a context of its own: kin ending the
// sign-in (ctx done) does not stop a browser loading the callback page.
func (h *host) visit(ctx context.Context, u string) error {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return h.browser.Visit(bctx, u)
}

func (h *host) Notice(server, message string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notices = append(h.notices, server+": "+message)
}

func (h *host) SignIns() []oauth.SignIn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]oauth.SignIn(nil), h.signIns...)
}

func (h *host) Notices() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.notices...)
}

// refuseHost fails the test when a sign-in is asked for.
type refuseHost struct{ t testing.TB }

func (h refuseHost) OpenURL(_ context.Context, req oauth.SignIn) error {
	h.t.Errorf("unexpected sign-in for %s", req.Server)
	return errors.New("no sign-in expected")
}

func (h refuseHost) Notice(string, string) {}

// world is one authorization server, one protected MCP server and a
// KIN_HOME.
type world struct {
	as     *oauthtest.AuthServer
	rs     *oauthtest.ResourceServer
	home   string
	logs   *observer.ObservedLogs
	logger *zap.Logger
}

func newWorld(t testing.TB, ao oauthtest.AuthOptions, ro oauthtest.ResourceOptions) *world {
	t.Helper()
	as := oauthtest.NewAuthServer(t, ao)
	rs := oauthtest.NewResourceServer(t, as, ro)
	core, logs := observer.New(zapcore.DebugLevel)
	return &world{as: as, rs: rs, home: t.TempDir(), logs: logs, logger: zap.New(core)}
}

func (w *world) manager(h oauth.Host) *oauth.Manager {
	return oauth.New(oauth.Options{KinHome: w.home, Host: h, Logger: w.logger})
}

// server is an oauth entry for the world's MCP server.
func (w *world) server(name string, headers map[string]string, o *config.OAuth) config.Server {
	if o == nil {
		o = &config.OAuth{CallbackHost: "127.0.0.1"}
	}
	return config.Server{
		Name: name, Scope: config.ScopeGlobal, Transport: config.TransportHTTP,
		URL: w.rs.URL, Headers: headers, Auth: "oauth", OAuth: o,
	}
}

// files lists the endpoint files in KIN_HOME/mcp_auth.
func (w *world) files(t testing.TB) []string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(w.home, oauth.DirName, "*.json"))
	return ms
}

// record reads an endpoint file as JSON.
func (w *world) record(t testing.TB, s config.Server) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.home, oauth.DirName, oauth.EndpointKey(s)+".json"))
	if err != nil {
		t.Fatalf("reading the endpoint file: %v", err)
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("endpoint file: %v", err)
	}
	return r
}

func accessToken(r map[string]any) string {
	tok, _ := r["token"].(map[string]any)
	s, _ := tok["accessToken"].(string)
	return s
}

// headerTransport adds the configured headers, as mcp/connect does.
type headerTransport struct {
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session to s with m's handler, as kin's connect
// does.
func connect(ctx context.Context, t testing.TB, m *oauth.Manager, s config.Server) (*mcp.ClientSession, error) {
	t.Helper()
	h, err := m.Handler(s)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "kin-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             s.URL,
		HTTPClient:           &http.Client{Transport: headerTransport{s.Headers}},
		OAuthHandler:         h,
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return client.Connect(ctx, tr, nil)
}

// mustConnect connects and closes the session when the test ends.
func mustConnect(t testing.TB, m *oauth.Manager, s config.Server) *mcp.ClientSession {
	t.Helper()
	cs, err := connect(context.Background(), t, m, s)
	if err != nil {
		t.Fatalf("connect %s: %v", s.Name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// whoami calls the protected tool and returns its text.
func whoami(t testing.TB, cs *mcp.ClientSession) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("whoami failed: %+v", res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// kindOf returns the oauth.Error kind in err's chain ("" for none).
func kindOf(err error) oauth.Kind {
	var e *oauth.Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// allLogText renders every observed log line with its fields.
func allLogText(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Message)
		for k, v := range e.ContextMap() {
			b.WriteString(" " + k + "=")
			data, _ := json.Marshal(v)
			b.Write(data)
		}
		b.WriteString("\n")
	}
	return b.String()
}
