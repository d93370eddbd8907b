package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"go.uber.org/zap"
	"golang.org/x/oauth2"

	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/config"
)

// signInArgs is what the server answered: the request it refused, and the
// status and headers of its answer (the WWW-Authenticate challenge).
type signInArgs struct {
	req    *http.Request
	status int
	header http.Header
}

// failureHold is how long a failed sign-in answers for its endpoint
// instead of a new one. go-sdk's client falls back from server/discover to
// initialize when the first request fails, which would otherwise show the
// person a second sign-in right after they declined or timed out the first.
const failureHold = 15 * time.Second

// signIn runs one sign-in for the endpoint; a caller arriving while one
// runs (in this kin, or in another on the same KIN_HOME: signInHere) waits
// for it instead of starting another, and one arriving just after one
// failed gets that failure (unless force: mcp/login).
func (m *Manager) signIn(ctx context.Context, s config.Server, ep *endpoint, a signInArgs, force bool) error {
	if !force {
		ep.mu.Lock()
		failed, at := ep.failure, ep.failedAt
		ep.mu.Unlock()
		if failed != nil && time.Since(at) < failureHold {
			return failed
		}
	}
	for {
		ch := m.flight.DoChan(ep.key, func() (any, error) {
			err := m.signInHere(ctx, s, ep, a, force)
			abandoned := err != nil && errors.Is(ctx.Err(), context.Canceled)
			ep.mu.Lock()
			switch {
			case err == nil:
				ep.failure = nil
			case !abandoned:
				// A caller that gave up (a reconnect, a shutdown) leaves no
				// failure to hold: the next connect may ask again at once.
				ep.failure, ep.failedAt = err, time.Now()
			}
			ep.mu.Unlock()
			return abandoned, err
		})
		select {
		case r := <-ch:
			if abandoned, _ := r.Val.(bool); abandoned && r.Shared && ctx.Err() == nil {
				// This caller joined a sign-in whose own caller gave up (a
				// connect stopped by mcp/login, say): run one of its own.
				continue
			}
			return r.Err
		case <-ctx.Done():
			return &Error{Kind: KindTimeout, Msg: "the sign-in was abandoned: " + ctx.Err().Error()}
		}
	}
}

// flow is one sign-in in progress.
type flow struct {
	m        *Manager
	s        config.Server
	ep       *endpoint
	cb       *callback
	sc       scrubber
	message  string
	prm      *oauthex.ProtectedResourceMetadata
	asm      *oauthex.AuthServerMeta
	method   string // the client's token endpoint authentication ("" unknown)
	obtained *oauth2.Token
	ctx      context.Context
	// reused is the client id of the stored registration the sign-in
	// uses ("" for any other client).
	reused string
}

func (m *Manager) runSignIn(ctx context.Context, s config.Server, ep *endpoint, a signInArgs) error {
	ep.mu.Lock()
	noRefresh := ep.noRefresh
	ep.mu.Unlock()
	if m.opts.Host == nil {
		msg := s.Name + " uses OAuth and has no stored sign-in: run mcp/login"
		if noRefresh {
			msg = s.Name + " uses OAuth and its sign-in expired without a refresh token: run mcp/login, and add the scope that grants one (such as offline_access) to oauth.scopes"
		}
		return &Error{Kind: KindNeedsLogin, Msg: msg}
	}
	ctx, cancel := context.WithDeadline(ctx, signInDeadline(ctx, time.Now()))
	defer cancel()
	start := time.Now()

	f := &flow{m: m, s: s, ep: ep, ctx: ctx, message: "Sign in to " + s.Name + " to connect it"}
	if noRefresh {
		f.message = "Sign in to " + s.Name + " again: the provider issued no refresh token, so kin must ask at every expiry. Add the scope that grants one (such as offline_access) to oauth.scopes"
	}
	f.sc.add(queryValues(s.URL)...)
	for k, v := range s.Headers {
		if SecretHeader(k) {
			f.sc.add(v)
		}
	}
	if m.opts.ClientSecret != nil {
		f.sc.add(m.opts.ClientSecret(s))
	}
	m.log.Info("mcp oauth: sign-in started", zap.String("server", s.Name), zap.String("endpoint", shortKey(ep.key)), zap.Int("status", a.status))

	challenges, _ := oauthex.ParseWWWAuthenticate(a.header.Values("WWW-Authenticate"))
	prm, asm, err := m.discover(ctx, challenges, a.req.URL.String())
	if err != nil {
		return f.fail(err)
	}
	f.prm, f.asm = prm, asm
	ch, err := f.client(ctx)
	if err != nil {
		return f.fail(err)
	}
	defer f.cb.close()
	f.method = ch.method

	cfg := &auth.AuthorizationCodeHandlerConfig{
		PreregisteredClient:      ch.creds,
		RedirectURL:              f.cb.redirect,
		AuthorizationCodeFetcher: f.fetch,
		AcceptUnadvertisedIss:    true, // a present iss is still compared
		Client:                   withClientAuth(m.client, asm.TokenEndpoint, ch.method, ch.id, ch.secret),
		NewTokenSource:           f.newTokenSource,
	}
	if ch.metadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: ch.metadataURL}
	}
	if scopes := configuredScopes(s); scopes != nil {
		// oauth.scopes replaces the advertised set exactly.
		cfg.ScopeFilter = func([]string) []string { return slices.Clone(scopes) }
	} else {
		cfg.RequestRefreshToken = true
		if a.status == http.StatusForbidden {
			// Step-up: keep what was granted before (go-sdk's handler is new
			// for each sign-in, so kin carries the granted scopes).
			granted := f.grantedScopes()
			cfg.ScopeFilter = func(d []string) []string { return union(granted, d) }
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return f.fail(&Error{Kind: KindConfig, Msg: "the sign-in could not be set up: " + f.sc.clean(err.Error())})
	}
	resp := &http.Response{StatusCode: a.status, Header: a.header, Body: http.NoBody, Request: a.req}
	if err := h.Authorize(ctx, a.req, resp); err != nil {
		if ctx.Err() != nil {
			if _, ok := errorsAs[*Error](err); !ok {
				err = f.timeout(ctx)
			}
		}
		return f.fail(explain(err, f.cb.redirect, &f.sc))
	}
	if f.obtained == nil {
		return f.fail(&Error{Kind: KindToken, Msg: "the sign-in ended without a token"})
	}
	ep.mu.Lock()
	ep.lastErr = ""
	ep.mu.Unlock()
	m.log.Info("mcp oauth: signed in", zap.String("server", s.Name), zap.String("endpoint", shortKey(ep.key)),
		zap.Bool("renewable", f.obtained.RefreshToken != ""), zap.Duration("took", time.Since(start)))
	if f.obtained.RefreshToken == "" {
		msg := "the provider issued no refresh token, so kin will ask you to sign in again when this one expires; add the scope that grants one (such as offline_access) to oauth.scopes"
		m.log.Warn("mcp oauth: no refresh token", zap.String("server", s.Name))
		m.notice(s, msg)
	}
	return nil
}

// signInDeadline is SignInTimeout from now, or a little before the
// caller's own deadline when that comes first: the flow then ends with an
// error that names the fix while the caller can still report it.
func signInDeadline(ctx context.Context, now time.Time) time.Time {
	d := now.Add(SignInTimeout)
	if parent, ok := ctx.Deadline(); ok {
		margin := min(time.Second, parent.Sub(now)/10)
		if p := parent.Add(-margin); p.Before(d) {
			d = p
		}
	}
	return d
}

// fail logs a failed sign-in, remembers it for Status and returns it as an
// Error, scrubbed of the flow's credentials as a last guard.
func (f *flow) fail(err error) error {
	e, ok := errorsAs[*Error](err)
	if !ok {
		e = &Error{Kind: KindToken, Msg: err.Error()}
	}
	e = &Error{Kind: e.Kind, Msg: f.sc.clean(e.Msg)}
	f.m.log.Warn("mcp oauth: sign-in failed", zap.String("server", f.s.Name), zap.String("endpoint", shortKey(f.ep.key)), zap.String("error", e.Msg))
	if f.reused != "" && !errors.Is(f.ctx.Err(), context.Canceled) {
		// A provider that forgot the registration (one that keeps them
		// in memory, restarted) shows the person an error page the
		// browser never comes back from: kin cannot tell that from a
		// sign-in left unfinished, and a registration kept for good
		// would fail every sign-in after it. The next one registers
		// again.
		f.m.forgetClient(f.ep, f.reused, "a sign-in with it failed")
	}
	f.ep.mu.Lock()
	f.ep.lastErr = e.Msg
	f.ep.mu.Unlock()
	return e
}

// chosenClient is the client a sign-in uses.
type chosenClient struct {
	creds       *oauthex.ClientCredentials // nil with metadataURL
	metadataURL string                     // a client ID metadata document URL (SEP-991)
	method      string                     // token endpoint authentication; "" leaves go-sdk's choice
	id, secret  string
}

// client picks the client and binds the callback: the configured
// oauth.clientId; else kin's client ID metadata document, where one is
// configured and the authorization server accepts such documents; else the
// stored registration for this authorization server, when its redirect URI
// can be served again; else a new dynamic registration, which is stored.
func (f *flow) client(ctx context.Context) (*chosenClient, error) {
	s, m := f.s, f.m
	host, port := callbackHost(s), callbackPort(s)
	if id := configuredClientID(s); id != "" {
		cb, err := listen(s.Name, host, port)
		if err != nil {
			return nil, err
		}
		f.cb = cb
		ch := &chosenClient{creds: &oauthex.ClientCredentials{ClientID: id}, method: methodNone, id: id}
		if m.opts.ClientSecret != nil {
			if secret := m.opts.ClientSecret(s); secret != "" {
				ch.creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
				ch.method, ch.secret = "", secret // the provider's advertised method
			}
		}
		return ch, nil
	}
	if u := m.opts.ClientMetadataURL; u != "" && f.asm.ClientIDMetadataDocumentSupported {
		cb, err := listen(s.Name, host, port)
		if err != nil {
			return nil, err
		}
		f.cb = cb
		m.log.Info("mcp oauth: using kin's client ID metadata document", zap.String("server", s.Name))
		return &chosenClient{metadataURL: u, method: methodNone, id: u}, nil
	}
	r, err := m.store.read(f.ep.key)
	if err != nil {
		return nil, err
	}
	if c := r.Client; c != nil && issuersEqual(c.Issuer, f.asm.Issuer) {
		f.sc.add(c.ClientSecret)
		if u, err := url.Parse(c.RedirectURI); err == nil && u.Hostname() == host && u.Path == "/callback" {
			regPort, _ := strconv.Atoi(u.Port())
			if regPort > 0 && (port == 0 || port == regPort) {
				cb, err := listen(s.Name, host, regPort)
				switch {
				case err == nil:
					f.cb = cb
					m.log.Info("mcp oauth: reusing the stored client registration", zap.String("server", s.Name), zap.String("client", c.ClientID))
					f.reused = c.ClientID
					return chosen(c), nil
				case port != 0:
					return nil, err
				}
				m.log.Info("mcp oauth: the registered callback port is busy; registering again on another", zap.String("server", s.Name), zap.Int("port", regPort))
			}
		}
	}
	cb, err := listen(s.Name, host, port)
	if err != nil {
		return nil, err
	}
	f.cb = cb
	if f.asm.RegistrationEndpoint == "" {
		cb.close()
		return nil, noRegistrationError(cb.redirect)
	}
	meta := &oauthex.ClientRegistrationMetadata{
		RedirectURIs:            []string{cb.redirect},
		TokenEndpointAuthMethod: "none",
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		ClientName:              "kin",
		ApplicationType:         "native",
	}
	reg, err := oauthex.RegisterClient(ctx, f.asm.RegistrationEndpoint, meta, m.client)
	if err != nil {
		cb.close()
		return nil, registrationError(err, cb.redirect)
	}
	f.sc.add(reg.ClientSecret)
	c := &clientRecord{
		ClientID: reg.ClientID, ClientSecret: reg.ClientSecret, AuthMethod: registeredMethod(reg.TokenEndpointAuthMethod, reg.ClientSecret),
		Issuer: f.asm.Issuer, RedirectURI: cb.redirect, RegisteredAt: time.Now().UTC(),
	}
	if err := m.store.update(f.ep.key, func(r *record) error {
		r.Server, r.Endpoint = s.Name, s.Display().Launch
		r.Client = c
		return nil
	}); err != nil {
		m.log.Warn("mcp oauth: saving the client registration failed", zap.String("server", s.Name), zap.String("error", err.Error()))
	}
	m.log.Info("mcp oauth: client registered", zap.String("server", s.Name), zap.String("client", c.ClientID), zap.String("redirect", c.RedirectURI))
	return chosen(c), nil
}

// forgetClient removes the stored registration with clientID, so that the
// next sign-in registers again. A sign-in made with it stays: a step-up
// the person declined must not cost them the one they have.
func (m *Manager) forgetClient(ep *endpoint, clientID, why string) {
	err := m.store.update(ep.key, func(r *record) error {
		if r.Client != nil && r.Client.ClientID == clientID {
			r.Client = nil
		}
		return nil
	})
	if err != nil {
		m.log.Warn("mcp oauth: forgetting a client registration failed", zap.String("endpoint", shortKey(ep.key)), zap.String("error", err.Error()))
		return
	}
	m.log.Info("mcp oauth: client registration forgotten", zap.String("endpoint", shortKey(ep.key)), zap.String("client", clientID), zap.String("reason", why))
}

// chosen is a registered client, authenticating as it was registered.
func chosen(c *clientRecord) *chosenClient {
	creds := &oauthex.ClientCredentials{ClientID: c.ClientID, Issuer: c.Issuer}
	if c.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
	}
	return &chosenClient{creds: creds, method: registeredMethod(c.AuthMethod, c.ClientSecret), id: c.ClientID, secret: c.ClientSecret}
}

// fetch is go-sdk's AuthorizationCodeFetcher: it hands the URL to the
// person through the Host and waits for the browser to come back to the
// loopback callback with the expected state.
func (f *flow) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(args.URL)
	if err != nil {
		return nil, &Error{Kind: KindConfig, Msg: "the authorization URL cannot be parsed"}
	}
	f.cb.expect(u.Query().Get("state"))
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	opened := make(chan error, 1)
	go func() {
		opened <- f.m.opts.Host.OpenURL(octx, SignIn{Server: f.s.Name, URL: args.URL, Message: f.message, RedirectURI: f.cb.redirect})
	}()
	for {
		select {
		case r := <-f.cb.results:
			if r.err != nil {
				return nil, r.err
			}
			f.sc.add(r.code)
			return &auth.AuthorizationResult{Code: r.code, State: r.state, Iss: r.iss}, nil
		case err := <-opened:
			if err != nil && ctx.Err() == nil {
				return nil, &Error{Kind: KindDenied, Msg: "the sign-in was not started: " + visible.Cut(f.sc.clean(safeCause(err)), 200)}
			}
			opened = nil
		case <-ctx.Done():
			return nil, f.timeout(ctx)
		}
	}
}

// timeout explains a sign-in that ran out of time: the usual cause is a
// redirect URI the provider refused on its own page.
func (f *flow) timeout(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &Error{Kind: KindTimeout, Msg: "the sign-in was cancelled"}
	}
	return &Error{Kind: KindTimeout, Msg: fmt.Sprintf(
		"the sign-in did not finish in time: the browser never came back to %s. If the provider reported a redirect URI mismatch (Entra ID: AADSTS50011), register exactly that URI, or set oauth.callbackHost and oauth.callbackPort to match the registered one; then run mcp/login",
		f.cb.redirect)}
}

// newTokenSource is go-sdk's NewTokenSource hook: it stores the new
// sign-in and returns the persisting source that renews it.
func (f *flow) newTokenSource(_ context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	f.sc.add(tok.AccessToken, tok.RefreshToken, cfg.ClientSecret)
	scopes := tokenScopes(tok)
	if scopes == nil {
		scopes = slices.Clone(cfg.Scopes)
	}
	t := &tokenRecord{
		AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.TokenType, Expiry: tok.Expiry,
		Scopes: scopes, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		TokenURL: cfg.Endpoint.TokenURL, AuthStyle: int(cfg.Endpoint.AuthStyle),
		Issuer: f.asm.Issuer, RevocationURL: f.asm.RevocationEndpoint, Resource: f.prm.Resource,
		ObtainedAt: time.Now().UTC(),
	}
	if f.method != "" {
		t.AuthStyle = int(authStyle(f.method))
	}
	f.obtained = tok
	return f.m.install(f.ep, f.s, t), nil
}

// grantedScopes are the scopes of the sign-in in use, for a step-up.
func (f *flow) grantedScopes() []string {
	r, err := f.m.store.read(f.ep.key)
	if err != nil || r.Token == nil {
		return nil
	}
	return slices.Clone(r.Token.Scopes)
}

// union is a followed by the members of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
