package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// AuthOptions changes how an AuthServer behaves.
type AuthOptions struct {
	// NoRegistration leaves registration_endpoint out of the metadata.
	NoRegistration bool
	// RegistrationStatus, when non-zero, is the status every registration
	// request is answered with (such as 404 or 400).
	RegistrationStatus int
	// AccessTTL is the lifetime of access tokens (default one hour).
	AccessTTL time.Duration
	// NoRefreshToken issues access tokens only.
	NoRefreshToken bool
	// AdvertiseIss sets authorization_response_iss_parameter_supported.
	AdvertiseIss bool
	// WrongIss, when set, is sent as the callback's iss instead of the
	// issuer.
	WrongIss string
	// NoIss leaves iss out of the callback.
	NoIss bool
	// ScopesSupported is advertised in the metadata.
	ScopesSupported []string
	// ExactRedirectPort makes the authorize endpoint match a loopback
	// redirect URI exactly, port included (as Entra ID does); by default any
	// port is accepted for a registered loopback redirect URI (RFC 8252
	// section 7.3).
	ExactRedirectPort bool
	// Clients are pre-registered clients.
	Clients []Client
	// Deny makes the authorize endpoint redirect with error=access_denied.
	Deny bool
	// RevokeOnReuse makes a spent refresh token, sent again, revoke every
	// token issued from the same sign-in (RFC 9700 section 4.14.2: reuse
	// detection, as Auth0, Okta and Keycloak offer).
	RevokeOnReuse bool
	// DefaultAudience makes a refresh that names no resource (RFC 8707)
	// get a token for the server's default audience, which the MCP server
	// refuses, as providers with a default audience answer; a refresh that
	// names another resource than the sign-in's is refused
	// (invalid_target) either way.
	DefaultAudience bool
	// NoRevocation leaves revocation_endpoint (RFC 7009) out of the
	// metadata, as many providers do.
	NoRevocation bool
}

// Client is a registered client.
type Client struct {
	ID           string
	Secret       string // "" for a public client
	RedirectURIs []string
	AuthMethod   string // none, client_secret_basic or client_secret_post
}

type codeGrant struct {
	clientID, redirectURI, challenge, resource, scope string
	expires                                           time.Time
}

// Token is what the AuthServer knows about an issued access token.
type Token struct {
	ClientID string
	Resource string
	Scopes   []string
	Expiry   time.Time
}

type refreshGrant struct {
	clientID, resource, scope string
	family                    string // the sign-in it descends from
}

// AuthServer is an in-process authorization server on a loopback httptest
// server. Its methods are safe for concurrent use.
type AuthServer struct {
	// URL is the issuer (the server's root URL, no trailing slash).
	URL string

	opts AuthOptions
	srv  *httptest.Server

	// mu guards every field below.
	mu            sync.Mutex
	clients       map[string]*Client
	codes         map[string]*codeGrant
	access        map[string]*Token
	refresh       map[string]*refreshGrant
	spent         map[string]string // a rotated refresh token -> its family
	accessFamily  map[string]string // an access token -> its family
	reuses        int
	secrets       []string // every token, code and client secret issued
	registrations int
	authorizes    int
	exchanges     int
	refreshes     int
	revocations   int
}

// NewAuthServer starts an AuthServer, closed when the test ends.
func NewAuthServer(t testing.TB, opts AuthOptions) *AuthServer {
	t.Helper()
	if opts.AccessTTL == 0 {
		opts.AccessTTL = time.Hour
	}
	as := &AuthServer{
		opts:    opts,
		clients: map[string]*Client{},
		codes:   map[string]*codeGrant{},
		access:  map[string]*Token{},
		refresh: map[string]*refreshGrant{},
		spent:   map[string]string{},

		accessFamily: map[string]string{},
	}
	for _, c := range opts.Clients {
		c := c
		as.clients[c.ID] = &c
		if c.Secret != "" {
			as.secrets = append(as.secrets, c.Secret)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	mux.HandleFunc("POST /register", as.register)
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	mux.HandleFunc("POST /revoke", as.revoke)
	as.srv = httptest.NewServer(mux)
	as.URL = as.srv.URL
	t.Cleanup(as.srv.Close)
	return as
}

func (as *AuthServer) metadata(w http.ResponseWriter, r *http.Request) {
	m := map[string]any{
		"issuer":                                as.URL,
		"authorization_endpoint":                as.URL + "/authorize",
		"token_endpoint":                        as.URL + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
	}
	if !as.opts.NoRegistration {
		m["registration_endpoint"] = as.URL + "/register"
	}
	if !as.opts.NoRevocation {
		m["revocation_endpoint"] = as.URL + "/revoke"
	}
	if len(as.opts.ScopesSupported) > 0 {
		m["scopes_supported"] = as.opts.ScopesSupported
	}
	if as.opts.AdvertiseIss {
		m["authorization_response_iss_parameter_supported"] = true
	}
	writeJSON(w, http.StatusOK, m)
}

func (as *AuthServer) register(w http.ResponseWriter, r *http.Request) {
	if as.opts.RegistrationStatus != 0 {
		if as.opts.RegistrationStatus == http.StatusBadRequest {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata", "error_description": "registration is closed"})
			return
		}
		http.Error(w, "no registration here", as.opts.RegistrationStatus)
		return
	}
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
		return
	}
	for _, u := range req.RedirectURIs {
		if !loopbackURI(u) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_redirect_uri"})
			return
		}
	}
	c := &Client{ID: "client-" + random(), RedirectURIs: req.RedirectURIs, AuthMethod: req.AuthMethod}
	if c.AuthMethod == "" {
		c.AuthMethod = "client_secret_basic"
	}
	if c.AuthMethod != "none" {
		c.Secret = "secret-" + random()
	}
	as.mu.Lock()
	as.clients[c.ID] = c
	as.registrations++
	if c.Secret != "" {
		as.secrets = append(as.secrets, c.Secret)
	}
	as.mu.Unlock()
	resp := map[string]any{
		"client_id":                  c.ID,
		"redirect_uris":              c.RedirectURIs,
		"token_endpoint_auth_method": c.AuthMethod,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
	}
	if c.Secret != "" {
		resp["client_secret"] = c.Secret
	}
	writeJSON(w, http.StatusCreated, resp)
}

func (as *AuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	as.mu.Lock()
	as.authorizes++
	c := as.clients[q.Get("client_id")]
	as.mu.Unlock()
	if c == nil {
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if !as.redirectAllowed(c, redirect) {
		// Like real providers, a redirect URI mismatch is shown to the
		// person, never sent to the client.
		http.Error(w, "redirect_uri mismatch", http.StatusBadRequest)
		return
	}
	if q.Get("response_type") != "code" || q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" {
		redirectWith(w, r, redirect, url.Values{"error": {"invalid_request"}, "state": {q.Get("state")}})
		return
	}
	if as.opts.Deny {
		redirectWith(w, r, redirect, url.Values{"error": {"access_denied"}, "error_description": {"the person said no"}, "state": {q.Get("state")}})
		return
	}
	code := "code-" + random()
	as.mu.Lock()
	as.codes[code] = &codeGrant{
		clientID: c.ID, redirectURI: redirect, challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scope: q.Get("scope"), expires: time.Now().Add(time.Minute),
	}
	as.secrets = append(as.secrets, code)
	as.mu.Unlock()
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	switch {
	case as.opts.WrongIss != "":
		v.Set("iss", as.opts.WrongIss)
	case !as.opts.NoIss:
		v.Set("iss", as.URL)
	}
	redirectWith(w, r, redirect, v)
}

func (as *AuthServer) redirectAllowed(c *Client, redirect string) bool {
	if slices.Contains(c.RedirectURIs, redirect) {
		return true
	}
	if as.opts.ExactRedirectPort || !loopbackURI(redirect) {
		return false
	}
	// RFC 8252 section 7.3: any port for a registered loopback URI.
	got, _ := url.Parse(redirect)
	for _, reg := range c.RedirectURIs {
		u, err := url.Parse(reg)
		if err == nil && u.Scheme == got.Scheme && u.Hostname() == got.Hostname() && u.Path == got.Path {
			return true
		}
	}
	return false
}

func (as *AuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	c := as.authenticate(r)
	if c == nil {
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		as.exchange(w, r, c)
	case "refresh_token":
		as.refreshToken(w, r, c)
	default:
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
	}
}

// authenticate checks the client's credentials by its auth method.
func (as *AuthServer) authenticate(r *http.Request) *Client {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	as.mu.Lock()
	c := as.clients[id]
	as.mu.Unlock()
	if c == nil {
		return nil
	}
	// Strict, like the conformance suite: a client authenticates exactly
	// as it was registered.
	switch c.AuthMethod {
	case "none", "":
		if !basic && secret == "" && r.Header.Get("Authorization") == "" {
			return c
		}
	case "client_secret_basic":
		if basic && secret == c.Secret && r.PostForm.Get("client_secret") == "" {
			return c
		}
	case "client_secret_post":
		if !basic && secret == c.Secret {
			return c
		}
	}
	return nil
}

func (as *AuthServer) exchange(w http.ResponseWriter, r *http.Request, c *Client) {
	f := r.PostForm
	as.mu.Lock()
	g := as.codes[f.Get("code")]
	delete(as.codes, f.Get("code")) // one use only
	as.exchanges++
	as.mu.Unlock()
	if g == nil || time.Now().After(g.expires) || g.clientID != c.ID || g.redirectURI != f.Get("redirect_uri") {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	if f.Get("resource") != g.resource {
		tokenError(w, http.StatusBadRequest, "invalid_target")
		return
	}
	as.issue(w, c.ID, g.resource, g.scope, "")
}

func (as *AuthServer) refreshToken(w http.ResponseWriter, r *http.Request, c *Client) {
	rt := r.PostForm.Get("refresh_token")
	as.mu.Lock()
	g := as.refresh[rt]
	if g != nil && g.clientID == c.ID {
		delete(as.refresh, rt) // refresh tokens rotate
		as.spent[rt] = g.family
		as.refreshes++
	}
	if fam, ok := as.spent[rt]; g == nil && ok {
		as.reuses++
		if as.opts.RevokeOnReuse {
			as.revokeFamily(fam)
		}
	}
	as.mu.Unlock()
	if g == nil || g.clientID != c.ID {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	resource := g.resource
	switch named := r.PostForm.Get("resource"); {
	case named == "" && as.opts.DefaultAudience:
		resource = as.URL + "/default-audience"
	case named != "" && named != g.resource:
		tokenError(w, http.StatusBadRequest, "invalid_target")
		return
	}
	as.issue(w, c.ID, resource, g.scope, g.family)
}

// revokeFamily forgets every live token of a sign-in (as.mu held).
func (as *AuthServer) revokeFamily(fam string) {
	for rt, g := range as.refresh {
		if g.family == fam {
			delete(as.refresh, rt)
		}
	}
	for at, f := range as.accessFamily {
		if f == fam {
			delete(as.access, at)
		}
	}
}

// issue answers with new tokens; family is the sign-in they descend from
// ("": a new one).
func (as *AuthServer) issue(w http.ResponseWriter, clientID, resource, scope, family string) {
	if family == "" {
		family = "fam-" + random()
	}
	at := "at-" + random()
	resp := map[string]any{
		"access_token": at,
		"token_type":   "Bearer",
		"expires_in":   int(as.opts.AccessTTL / time.Second),
	}
	if scope != "" {
		resp["scope"] = scope
	}
	as.mu.Lock()
	as.access[at] = &Token{ClientID: clientID, Resource: resource, Scopes: strings.Fields(scope), Expiry: time.Now().Add(as.opts.AccessTTL)}
	as.accessFamily[at] = family
	as.secrets = append(as.secrets, at)
	if !as.opts.NoRefreshToken {
		rt := "rt-" + random()
		as.refresh[rt] = &refreshGrant{clientID: clientID, resource: resource, scope: scope, family: family}
		as.secrets = append(as.secrets, rt)
		resp["refresh_token"] = rt
	}
	as.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, resp)
}

func (as *AuthServer) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	tok := r.PostForm.Get("token")
	as.mu.Lock()
	delete(as.access, tok)
	delete(as.refresh, tok)
	as.revocations++
	as.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Verify returns what the server knows about a live access token, or nil.
func (as *AuthServer) Verify(accessToken string) *Token {
	as.mu.Lock()
	defer as.mu.Unlock()
	t := as.access[accessToken]
	if t == nil || time.Now().After(t.Expiry) {
		return nil
	}
	c := *t
	return &c
}

// RevokeAll forgets every access and refresh token, as if the person signed
// kin out at the provider.
func (as *AuthServer) RevokeAll() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.access)
	clear(as.refresh)
}

// Restart forgets every dynamically registered client and every token, as
// a provider that keeps its registrations in memory does when it restarts
// (pre-registered clients stay).
func (as *AuthServer) Restart() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.clients)
	for _, c := range as.opts.Clients {
		c := c
		as.clients[c.ID] = &c
	}
	clear(as.codes)
	clear(as.access)
	clear(as.refresh)
}

// ExpireAccessTokens makes every access token invalid while keeping the
// refresh tokens.
func (as *AuthServer) ExpireAccessTokens() {
	as.mu.Lock()
	defer as.mu.Unlock()
	clear(as.access)
}

// Secrets returns every credential the server handed out (access and
// refresh tokens, codes, client secrets), for canary checks.
func (as *AuthServer) Secrets() []string {
	as.mu.Lock()
	defer as.mu.Unlock()
	return slices.Clone(as.secrets)
}

// Counts is how often each endpoint did its work.
type Counts struct {
	Registrations, Authorizes, Exchanges, Refreshes, Revocations int
	// Reuses counts refresh tokens sent again after they were spent.
	Reuses int
}

// Counts returns the endpoint counters.
func (as *AuthServer) Counts() Counts {
	as.mu.Lock()
	defer as.mu.Unlock()
	return Counts{as.registrations, as.authorizes, as.exchanges, as.refreshes, as.revocations, as.reuses}
}

func loopbackURI(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func redirectWith(w http.ResponseWriter, r *http.Request, to string, v url.Values) {
	u, err := url.Parse(to)
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func tokenError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func random() string { return rand.Text() }
