package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/config"
)

// Manager signs kin in to OAuth-protected MCP servers and keeps the
// sign-ins. Create it with New; it is safe for concurrent use and keeps no
// package-level state.
type Manager struct {
	opts   Options
	log    *zap.Logger
	client *http.Client
	store  *store
	flight singleflight.Group // one sign-in per endpoint key at a time

	// mu guards endpoints.
	mu        sync.Mutex
	endpoints map[string]*endpoint
}

// endpoint is the live state of one endpoint identity, shared by every
// handler (every connection) for it.
type endpoint struct {
	key string

	// refreshMu serialises forced refreshes (after a 401), so two requests
	// rejected together do not both spend a rotating refresh token. It
	// guards forced, the access token the last forced refresh produced.
	refreshMu sync.Mutex
	forced    string

	// mu guards the fields below.
	mu sync.Mutex
	ts *persistingSource // the sign-in in use; nil: none loaded
	// noRefresh is set when the stored sign-in expired and the provider
	// gave no refresh token (the next sign-in explains why it asks again).
	noRefresh bool
	// failure is the last failed sign-in and failedAt its time (see
	// failureHold); lastErr is its message, "" after a success.
	failure  error
	failedAt time.Time
	lastErr  string
}

// New returns a Manager. Nothing is read or contacted until it is used.
func New(opts Options) *Manager {
	m := &Manager{
		opts:      opts,
		log:       opts.Logger,
		client:    opts.HTTPClient,
		store:     &store{dir: filepath.Join(opts.KinHome, DirName)},
		endpoints: map[string]*endpoint{},
	}
	if m.log == nil {
		m.log = zap.NewNop()
	}
	if m.client == nil {
		m.client = defaultHTTPClient()
	}
	return m
}

func (m *Manager) endpoint(s config.Server) *endpoint {
	key := EndpointKey(s)
	m.mu.Lock()
	defer m.mu.Unlock()
	ep := m.endpoints[key]
	if ep == nil {
		ep = &endpoint{key: key}
		m.endpoints[key] = ep
	}
	return ep
}

// Handler returns the OAuth handler for an http server, to be set as
// mcp.StreamableClientTransport.OAuthHandler. For a server with
// "auth": "oauth" it sends the stored token (renewing it when it expires)
// and signs in when the server answers 401 (or 403 insufficient_scope).
// For any other server it sends nothing and turns a 401 into an error
// saying whether OAuth sign-in is available. An oauth entry that cannot
// work as written (a non-loopback callbackHost, say) is refused here,
// before any network call.
func (m *Manager) Handler(s config.Server) (auth.OAuthHandler, error) {
	if s.Transport != config.TransportHTTP {
		return nil, &Error{Kind: KindConfig, Msg: "OAuth applies only to http servers"}
	}
	if s.Auth != "oauth" {
		return &staticHandler{hasHeaders: len(s.Headers) > 0}, nil
	}
	if err := checkServer(s); err != nil {
		return nil, err
	}
	return &handler{m: m, s: s, ep: m.endpoint(s)}, nil
}

// ConnectTimeout is the budget for connecting s: SignInTimeout when the
// connect may have to wait for the person to sign in (an oauth server
// without a usable stored sign-in), normal otherwise.
func (m *Manager) ConnectTimeout(s config.Server, normal time.Duration) time.Duration {
	if s.Auth == "oauth" && !m.Status(s).SignedIn && normal < SignInTimeout {
		return SignInTimeout
	}
	return normal
}

// Login starts (or restarts) the sign-in of an oauth server: it forgets the
// stored token (the registration is kept), asks the server how it wants to
// be signed in to, and returns once the new token is stored. Reconnect the
// server afterwards. A sign-in already running for the endpoint is joined.
func (m *Manager) Login(ctx context.Context, s config.Server) error {
	if s.Auth != "oauth" {
		return &Error{Kind: KindConfig, Msg: `this server does not use OAuth: set "auth": "oauth" on it to sign in`}
	}
	if err := checkServer(s); err != nil {
		return err
	}
	if m.opts.Host == nil {
		return &Error{Kind: KindNeedsLogin, Msg: "no front end is attached to show the sign-in URL"}
	}
	ep := m.endpoint(s)
	if err := m.forget(ep, s, false); err != nil {
		return err
	}
	req, status, hdr, err := m.probe(ctx, s)
	if err != nil {
		return err
	}
	m.log.Info("mcp oauth: sign-in requested", zap.String("server", s.Name), zap.String("endpoint", shortKey(ep.key)))
	return m.signIn(ctx, s, ep, signInArgs{req: req, status: status, header: hdr}, true)
}

// Logout forgets the stored sign-in of s (the client registration is kept)
// and asks the authorization server to revoke its tokens, when it offers
// revocation. Revocation is best effort; only a file error is returned.
func (m *Manager) Logout(s config.Server) error {
	if s.Transport != config.TransportHTTP {
		return nil
	}
	return m.forget(m.endpoint(s), s, true)
}

// forget drops the endpoint's token from memory and from its file, and
// revokes it first when asked to.
func (m *Manager) forget(ep *endpoint, s config.Server, revoke bool) error {
	ep.mu.Lock()
	ep.ts = nil
	ep.noRefresh = false
	ep.mu.Unlock()
	var old *tokenRecord
	err := m.store.update(ep.key, func(r *record) error {
		old = r.Token
		r.Token = nil
		return nil
	})
	if err != nil {
		return err
	}
	if old != nil {
		m.log.Info("mcp oauth: stored sign-in removed", zap.String("server", s.Name), zap.String("endpoint", shortKey(ep.key)))
		if revoke {
			m.revoke(old, s)
		}
	}
	return nil
}

// Status describes the OAuth setup of s without contacting anything.
func (m *Manager) Status(s config.Server) StatusInfo {
	if s.Transport != config.TransportHTTP || s.Auth != "oauth" {
		return StatusInfo{}
	}
	st := StatusInfo{Auth: "oauth", ClientID: configuredClientID(s)}
	host, port := callbackHost(s), callbackPort(s)
	if err := checkServer(s); err != nil {
		st.Problem = err.Error()
	}
	st.RedirectURI = redirectURI(host, port)
	if port == 0 {
		st.RedirectURI = "http://" + host + ":<ephemeral>/callback"
		st.EphemeralPort = true
	}
	ep := m.endpoint(s)
	ep.mu.Lock()
	st.LastError = ep.lastErr
	ep.mu.Unlock()
	r, err := m.store.read(ep.key)
	if err != nil {
		if st.Problem == "" {
			st.Problem = err.Error()
		}
		return st
	}
	if c := r.Client; c != nil {
		st.Registered = true
		if st.ClientID == "" && port == 0 {
			if u, err := url.Parse(c.RedirectURI); err == nil && u.Hostname() == host {
				st.RedirectURI, st.EphemeralPort = c.RedirectURI, false
			}
		}
	}
	if t := usableToken(r.Token, s); t != nil && !expiredForGood(t) {
		st.SignedIn = true
		st.Renewable = t.RefreshToken != ""
	}
	return st
}

// checkServer refuses an oauth entry that cannot work, before any network
// call. The configuration loader validates the same rules; a hand-built
// config.Server is checked here again.
func checkServer(s config.Server) error {
	u, err := url.Parse(s.URL)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return &Error{Kind: KindConfig, Msg: "the server url is not an absolute http(s) URL"}
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return &Error{Kind: KindConfig, Msg: "OAuth sign-in needs an https server url (plain http only to localhost or a loopback address)"}
	}
	host := callbackHost(s)
	switch host {
	case "127.0.0.1":
	case "localhost":
		if callbackPort(s) == 0 {
			return &Error{Kind: KindConfig, Msg: `oauth.callbackHost "localhost" requires oauth.callbackPort (the port of the registered redirect URI)`}
		}
	default:
		return &Error{Kind: KindConfig, Msg: fmt.Sprintf(
			`oauth.callbackHost %s is not allowed: kin accepts only "127.0.0.1" or "localhost", because the redirect carries the authorization code and a non-loopback host would hand it to another machine`,
			strconv.Quote(visible.Cut(host, 60)))}
	}
	if p := callbackPort(s); p < 0 || p > 65535 {
		return &Error{Kind: KindConfig, Msg: "oauth.callbackPort must be from 1 to 65535"}
	}
	return nil
}

func configuredClientID(s config.Server) string {
	if s.OAuth == nil {
		return ""
	}
	return s.OAuth.ClientID
}

func callbackHost(s config.Server) string {
	if s.OAuth == nil || s.OAuth.CallbackHost == "" {
		return "127.0.0.1"
	}
	return s.OAuth.CallbackHost
}

func callbackPort(s config.Server) int {
	if s.OAuth == nil {
		return 0
	}
	return s.OAuth.CallbackPort
}

func configuredScopes(s config.Server) []string {
	if s.OAuth == nil {
		return nil
	}
	return s.OAuth.Scopes
}

func redirectURI(host string, port int) string {
	return "http://" + host + ":" + strconv.Itoa(port) + "/callback"
}

// usableToken returns the stored sign-in when it belongs to the configured
// client (a changed oauth.clientId needs a new sign-in).
func usableToken(t *tokenRecord, s config.Server) *tokenRecord {
	if t == nil || t.AccessToken == "" {
		return nil
	}
	if id := configuredClientID(s); id != "" && id != t.ClientID {
		return nil
	}
	return t
}

// expiredForGood reports a token that has expired (by oauth2's rule: ten
// seconds early) and cannot be renewed.
func expiredForGood(t *tokenRecord) bool {
	return t.RefreshToken == "" && !t.Expiry.IsZero() && time.Now().Add(10*time.Second).After(t.Expiry)
}

// errorsAs is errors.As for a target type, returning the match.
func errorsAs[T error](err error) (T, bool) {
	var t T
	ok := errors.As(err, &t)
	return t, ok
}

// String never shows a credential.
func (m *Manager) String() string { return "oauth.Manager(" + m.store.dir + ")" }

// String never shows a credential.
func (ep *endpoint) String() string { return "oauth endpoint " + shortKey(ep.key) }

// Secrets returns the credentials of s's sign-in, in use or stored: access
// and refresh tokens and a registered client secret. They are for
// redaction only: a server that echoes its own token back (in a tool
// result, an error) must not hand it to the model, the session log or the
// editor. Nil for a server that does not use OAuth.
func (m *Manager) Secrets(s config.Server) []string {
	if s.Transport != config.TransportHTTP || s.Auth != "oauth" {
		return nil
	}
	var out []string
	add := func(vs ...string) {
		for _, v := range vs {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	ep := m.endpoint(s)
	if ps, cur := ep.current(); ps != nil {
		add(ps.rec.AccessToken, ps.rec.RefreshToken, ps.rec.ClientSecret)
		if cur != nil {
			add(cur.AccessToken, cur.RefreshToken)
		}
	}
	if r, err := m.store.read(ep.key); err == nil {
		if t := r.Token; t != nil {
			add(t.AccessToken, t.RefreshToken, t.ClientSecret)
		}
		if c := r.Client; c != nil {
			add(c.ClientSecret)
		}
	}
	return out
}
