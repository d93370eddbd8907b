package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/oauth2"

	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/config"
)

// persistingSource hands out an endpoint's token through oauth2's
// ReuseTokenSource, which has renewer renew it when it expires; renewer
// writes every new token to the endpoint's file, so a later launch (and
// another kin process) reconnects silently.
type persistingSource struct {
	m    *Manager
	ep   *endpoint
	s    config.Server
	rec  tokenRecord        // the client and endpoints that renew the token
	base oauth2.TokenSource // oauth2.ReuseTokenSource: safe for concurrent use

	// mu guards last.
	mu   sync.Mutex
	last *oauth2.Token
}

// String never shows a credential.
func (p *persistingSource) String() string {
	return "oauth token source for " + p.s.Name
}

func (p *persistingSource) Token() (*oauth2.Token, error) {
	t, err := p.base.Token()
	if err != nil {
		if re, ok := errorsAs[*oauth2.RetrieveError](err); ok {
			// (A renewer's refreshError that says "again" unwraps to
			// invalid_grant: the provider forgot the registered client.)
			if re.ErrorCode == "invalid_grant" {
				// The refresh token is dead (revoked, expired): drop the
				// sign-in. The transport sends the request without a token
				// and the 401 starts a fresh sign-in.
				p.m.drop(p.ep, p, "the authorization server no longer accepts the refresh token")
			}
			if rf, ok := errorsAs[*refreshError](err); ok {
				return nil, rf
			}
			return nil, &refreshError{re: re}
		}
		if e, ok := errorsAs[*Error](err); ok {
			return nil, e
		}
		return nil, &Error{Kind: KindToken, Msg: "renewing the sign-in failed: " + visible.Cut(safeCause(err), 200)}
	}
	p.mu.Lock()
	p.last = t
	p.mu.Unlock()
	return t, nil
}

// renewer is the oauth2.TokenSource behind a persistingSource's
// ReuseTokenSource, called when the token in hand is due. kin processes
// sharing a KIN_HOME share the endpoint's file, and refresh tokens rotate:
// once one process renewed, the refresh token another holds in memory is
// spent, and sending it again makes providers with reuse detection revoke
// the whole sign-in. So the renewal runs under the file's lock, takes a
// token another process stored meanwhile when it is still good, renews
// with the stored refresh token otherwise, and stores the result before
// the lock is let go.
type renewer struct {
	p *persistingSource
	// refresh is the refresh token this source was given (the stored one
	// wins when it belongs to the same client).
	refresh string
	// reject is an access token the server refused: never taken from the
	// file, however far its expiry.
	reject string
}

func (r *renewer) Token() (*oauth2.Token, error) {
	p := r.p
	var out *oauth2.Token
	var rerr error
	err := p.m.store.locked(p.ep.key, func(rec *record) (bool, error) {
		rt, tr := r.refresh, p.rec
		if rec.Token == nil {
			// The file no longer has the sign-in: the person signed out
			// (mcp/logout, mcp/login's restart) here or in another kin,
			// or a renewal found it dead. Renewing with the token in
			// memory would write it back and undo that; a sign-in asks
			// instead.
			rerr = &refreshError{msg: "the sign-in was removed (signed out, or renewed elsewhere and refused)", again: true,
				re: &oauth2.RetrieveError{ErrorCode: "invalid_grant"}}
			return false, nil
		}
		if st := rec.Token; st.ClientID == tr.ClientID && st.TokenURL == tr.TokenURL {
			if tok := st.token(); tok.Valid() && tok.AccessToken != r.reject {
				out = tok // another process renewed: use its token
				return false, nil
			}
			if st.RefreshToken != "" {
				rt, tr = st.RefreshToken, *st
			}
		}
		if rt == "" {
			rerr = &Error{Kind: KindToken, Msg: "the sign-in expired and there is no refresh token to renew it with"}
			return false, nil
		}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, withResource(p.m.client, tr.TokenURL, tr.Resource))
		tok, err := tr.config().TokenSource(ctx, &oauth2.Token{RefreshToken: rt}).Token()
		if err != nil {
			rerr = err // kept whole: the caller tells invalid_grant apart
			re, _ := errorsAs[*oauth2.RetrieveError](err)
			switch {
			case re == nil:
			case re.ErrorCode == "invalid_client" && rec.Client != nil && rec.Client.ClientID == tr.ClientID:
				// The provider no longer knows kin's dynamic
				// registration (one kept in memory, restarted): every
				// sign-in with it would fail too. The next registers
				// again.
				rec.Client, rec.Token = nil, nil
				rerr = &refreshError{re: re, again: true}
				return true, nil
			case re.ErrorCode == "invalid_grant" && rec.Token != nil && rec.Token.RefreshToken == rt:
				rec.Token = nil // dead for every process: none tries it again
				return true, nil
			}
			return false, nil
		}
		if tok.RefreshToken == "" {
			tok.RefreshToken = rt // the provider keeps the old one valid
		}
		tr.AccessToken, tr.RefreshToken, tr.TokenType, tr.Expiry = tok.AccessToken, tok.RefreshToken, tok.TokenType, tok.Expiry
		if sc := tokenScopes(tok); sc != nil {
			tr.Scopes = sc
		}
		rec.Token, out = &tr, tok
		return true, nil
	})
	if rerr != nil {
		return nil, rerr
	}
	if err != nil {
		// Not stored: a later launch would find the spent refresh token.
		return nil, err
	}
	if out.RefreshToken != "" {
		r.refresh = out.RefreshToken
	}
	p.m.log.Info("mcp oauth: sign-in renewed", zap.String("server", p.s.Name), zap.String("endpoint", shortKey(p.ep.key)), zap.Time("expires", out.Expiry))
	return out, nil
}

// current is the last token handed out (or loaded).
func (p *persistingSource) current() *oauth2.Token {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// refreshError is a refused renewal. It unwraps to the oauth2.RetrieveError
// (go-sdk's transport treats invalid_grant as "sign in again") but its text
// carries only the status and error code, never the response body. With
// again set, it unwraps to an invalid_grant whatever the provider said:
// go-sdk sends the request without a token (so that the 401 starts a
// sign-in) for that code only, and a forgotten client needs the same.
type refreshError struct {
	re    *oauth2.RetrieveError
	again bool
	msg   string // when set, what happened (kin refused to renew)
}

func (e *refreshError) Error() string {
	if e.msg != "" {
		return "renewing the sign-in failed: " + e.msg
	}
	status := 0
	if e.re.Response != nil {
		status = e.re.Response.StatusCode
	}
	msg := fmt.Sprintf("renewing the sign-in failed: the authorization server answered HTTP %d", status)
	if e.re.ErrorCode != "" {
		msg += " " + visible.Cut(printable(e.re.ErrorCode), 60)
	}
	return msg
}

func (e *refreshError) Unwrap() error {
	if e.again && e.re.ErrorCode != "invalid_grant" {
		re := *e.re
		re.ErrorCode = "invalid_grant"
		return &re
	}
	return e.re
}

// newSource builds the token source for a stored sign-in. reject is an
// access token the server refused ("" for none), which a renewal must not
// take back from the file.
func (m *Manager) newSource(ep *endpoint, s config.Server, t *tokenRecord, reject string) *persistingSource {
	tok := t.token()
	p := &persistingSource{m: m, ep: ep, s: s, rec: *t, last: tok}
	p.base = oauth2.ReuseTokenSource(tok, &renewer{p: p, refresh: t.RefreshToken, reject: reject})
	return p
}

// source returns the endpoint's token source, loading the stored sign-in
// when none is in use (so a sign-in made by another kin process is picked
// up). It returns nil when there is no usable sign-in: the transport then
// sends no token and the server's 401 starts a sign-in.
func (m *Manager) source(ep *endpoint, s config.Server) *persistingSource {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.ts == nil {
		r, err := m.store.read(ep.key)
		if err != nil {
			m.log.Warn("mcp oauth: reading the stored sign-in failed", zap.String("server", s.Name), zap.String("error", err.Error()))
			return nil
		}
		t := usableToken(r.Token, s)
		if t == nil {
			return nil
		}
		ep.ts = m.newSource(ep, s, t, "")
	}
	if cur := ep.ts.current(); cur != nil && cur.RefreshToken == "" && !cur.Expiry.IsZero() && !cur.Valid() {
		// Expired, and nothing to renew it with.
		ep.noRefresh = true
		return nil
	}
	return ep.ts
}

// install stores a new sign-in and puts it in use.
func (m *Manager) install(ep *endpoint, s config.Server, t *tokenRecord) *persistingSource {
	ps := m.newSource(ep, s, t, "")
	ep.mu.Lock()
	ep.ts = ps
	ep.noRefresh = false
	ep.mu.Unlock()
	err := m.store.update(ep.key, func(r *record) error {
		r.Server, r.Endpoint = s.Name, s.Display().Launch
		r.Token = t
		return nil
	})
	if err != nil {
		m.log.Warn("mcp oauth: saving the sign-in failed", zap.String("server", s.Name), zap.String("error", err.Error()))
		m.notice(s, "the sign-in worked but could not be saved ("+err.Error()+"); kin will ask again at the next launch")
	}
	return ps
}

// drop forgets the sign-in behind p (when it is still the one in use).
func (m *Manager) drop(ep *endpoint, p *persistingSource, why string) {
	ep.mu.Lock()
	if ep.ts != p {
		ep.mu.Unlock()
		return
	}
	ep.ts = nil
	ep.mu.Unlock()
	refresh := p.rec.RefreshToken
	if cur := p.current(); cur != nil && cur.RefreshToken != "" {
		refresh = cur.RefreshToken
	}
	_ = m.store.update(ep.key, func(r *record) error {
		if r.Token != nil && (r.Token.RefreshToken == refresh || r.Token.RefreshToken == p.rec.RefreshToken) {
			r.Token = nil
		}
		return nil
	})
	m.log.Info("mcp oauth: stored sign-in dropped", zap.String("server", p.s.Name), zap.String("endpoint", shortKey(ep.key)), zap.String("reason", why))
}

// current returns the token in use for the endpoint, or nil.
func (ep *endpoint) current() (*persistingSource, *oauth2.Token) {
	ep.mu.Lock()
	ps := ep.ts
	ep.mu.Unlock()
	if ps == nil {
		return nil, nil
	}
	return ps, ps.current()
}

// forceRefresh renews the sign-in after the server rejected the access
// token sent (401) although it had not expired by kin's clock. It reports
// whether the request may be retried with a new token.
func (m *Manager) forceRefresh(ep *endpoint, s config.Server, sent string) bool {
	ep.refreshMu.Lock()
	defer ep.refreshMu.Unlock()
	ps, cur := ep.current()
	if ps == nil || cur == nil {
		return false
	}
	if cur.AccessToken != sent {
		return true // renewed meanwhile
	}
	if cur.RefreshToken == "" || sent == ep.forced {
		// Nothing to renew with, or the token a forced renewal gave was
		// rejected too: renewing again would not help; sign in.
		return false
	}
	t := ps.rec
	t.AccessToken, t.RefreshToken, t.Expiry = "", cur.RefreshToken, time.Time{}
	fresh := m.newSource(ep, s, &t, sent)
	fresh.last = nil
	ep.mu.Lock()
	if ep.ts != ps {
		ep.mu.Unlock()
		return true
	}
	ep.ts = fresh
	ep.mu.Unlock()
	if _, err := fresh.Token(); err != nil {
		m.log.Info("mcp oauth: renewing a rejected token failed", zap.String("server", s.Name), zap.String("error", err.Error()))
		m.drop(ep, fresh, "renewing a rejected token failed")
		return false
	}
	if cur := fresh.current(); cur != nil {
		ep.forced = cur.AccessToken
	}
	return true
}

// revoke asks the authorization server to revoke a sign-in's tokens (RFC
// 7009), refresh token first. Best effort, bounded to ten seconds.
func (m *Manager) revoke(t *tokenRecord, s config.Server) {
	if t.RevocationURL == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tok := range []struct{ value, hint string }{{t.RefreshToken, "refresh_token"}, {t.AccessToken, "access_token"}} {
		if tok.value == "" {
			continue
		}
		form := url.Values{"token": {tok.value}, "token_type_hint": {tok.hint}}
		if t.ClientSecret == "" {
			form.Set("client_id", t.ClientID)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.RevocationURL, strings.NewReader(form.Encode()))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if t.ClientSecret != "" {
			req.SetBasicAuth(url.QueryEscape(t.ClientID), url.QueryEscape(t.ClientSecret))
		}
		resp, err := m.client.Do(req)
		if err != nil {
			m.log.Info("mcp oauth: revocation failed", zap.String("server", s.Name), zap.String("error", safeCause(err)))
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		m.log.Info("mcp oauth: token revoked", zap.String("server", s.Name), zap.String("kind", tok.hint), zap.Int("status", resp.StatusCode))
	}
}

// tokenScopes reads the scope a token response granted (nil: not said).
func tokenScopes(t *oauth2.Token) []string {
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		return strings.Fields(s)
	}
	return nil
}

func (m *Manager) notice(s config.Server, msg string) {
	if m.opts.Host != nil {
		m.opts.Host.Notice(s.Name, msg)
	}
}
