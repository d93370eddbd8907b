package manager

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/oauth"
)

// ErrUnknownServer is returned by Login and Logout for a name that is not
// a server of the last Start or Apply.
var ErrUnknownServer = errors.New("no such MCP server")

// oauthHost shows the OAuth sign-in of a server to the person through the
// Manager's Host: the sign-in URL becomes an elicitation of mode "url" and
// purpose "oauth" (kin never opens or fetches it), a sign-in note a
// warning notice.
type oauthHost struct{ m *Manager }

// OpenURL asks the person to open the sign-in page. Anything but accept
// ends the sign-in. It returns when the person answered, or when ctx ends
// (the browser came back to the callback first, or the sign-in failed).
func (h oauthHost) OpenURL(ctx context.Context, req oauth.SignIn) error {
	// The authorization server chose this address (its metadata's
	// authorization_endpoint, which go-sdk lets be any scheme but
	// javascript, data and vbscript to a "localhost" host, so
	// file://localhost/... too): it is put to the
	// person under the same rule as a server's own link.
	if why := linkProblem(req.URL); why != "" {
		return fmt.Errorf("the sign-in address is not a web page kin will ask you to open (%s)", why)
	}
	r := ElicitRequest{Server: req.Server, Mode: "url", Purpose: "oauth", Message: req.Message, URL: req.URL}
	if s := h.m.server(req.Server); s != nil {
		// A token that ran out during a tool call: name the call, and
		// stop its clock while the person signs in.
		calls := s.inflightCalls()
		attribute(&r, calls)
		defer holdCalls(calls)()
		r.Message = s.Redact(r.Message)
	}
	res, err := h.m.host.Elicit(ctx, r)
	if err != nil {
		return err
	}
	switch res.Action {
	case "accept":
		return nil
	case "":
		return errors.New("the sign-in link got no answer")
	}
	return fmt.Errorf("the person answered %s to the sign-in link", res.Action)
}

// Notice passes on a note about a server's sign-in (no refresh token was
// issued, the sign-in could not be saved).
func (h oauthHost) Notice(server, message string) {
	if s := h.m.server(server); s != nil {
		server, message = s.disp.Name, s.Redact(message)
	}
	h.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s: %s", server, message))
}

// Login starts (or restarts) the OAuth sign-in of the named server: it
// ends the server's connection (its stored token is replaced), asks for
// the launch approval first when the server is not trusted, runs the
// sign-in (the person gets the URL through Host.Elicit) and connects the
// server again. It returns when the server has settled; an error says why
// the sign-in did not finish (an *oauth.Error for a sign-in that failed,
// ErrUnknownServer for an unknown name) and the server is left in
// needs_login.
func (m *Manager) Login(ctx context.Context, name string) error {
	s, err := m.loginServer(name)
	if err != nil {
		return err
	}
	defer m.work.Done()
	return s.login(ctx)
}

// Logout forgets the stored sign-in of the named server (asking the
// authorization server to revoke it, where it offers that) after ending its
// connection; the server is left in needs_login. The client registration
// is kept.
func (m *Manager) Logout(name string) error {
	s, err := m.loginServer(name)
	if err != nil {
		return err
	}
	defer m.work.Done()
	s.stop(false)
	if err := m.oauth.Logout(s.cfg); err != nil {
		return err
	}
	s.set(StateNeedsLogin, "signed out: run mcp/login to sign in again")
	return nil
}

// loginServer finds a server that can sign in with OAuth. When it finds
// one, it counts the call as work under way (Close waits for it): the
// caller calls m.work.Done when it ends.
func (m *Manager) loginServer(name string) (s *server, err error) {
	m.mu.Lock()
	s = m.servers[name]
	closed := m.closed
	if !closed {
		m.work.Add(1)
	}
	m.mu.Unlock()
	defer func() {
		if err != nil && !closed {
			m.work.Done()
		}
	}()
	switch {
	case closed:
		return nil, errors.New("the MCP servers are shut down")
	case s == nil:
		return nil, fmt.Errorf("%w: %q (add it and run mcp/apply first)", ErrUnknownServer, name)
	case !s.cfg.Connectable():
		return nil, &oauth.Error{Kind: oauth.KindConfig, Msg: fmt.Sprintf("%s is disabled: enable it and run mcp/apply, then sign in", s.disp.Name)}
	case s.cfg.Transport != config.TransportHTTP || s.cfg.Auth != "oauth":
		return nil, &oauth.Error{Kind: oauth.KindConfig, Msg: fmt.Sprintf(`%s does not use OAuth: set "auth": "oauth" on it (an http server) to sign in`, s.disp.Name)}
	}
	return s, nil
}

// login is Manager.Login for one server.
func (s *server) login(ctx context.Context) error {
	// The sign-in replaces the stored token the connection sends, so the
	// connection ends now rather than stall on its next request.
	s.stop(false)
	life := s.begin()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatch := context.AfterFunc(life, cancel)
	defer stopWatch()

	if !s.approve(ctx, life) {
		if life.Err() != nil {
			return errors.New("the server was stopped during the sign-in")
		}
		return errors.New("the launch was not approved")
	}
	s.set(StateConnecting, "")
	if err := s.m.oauth.Login(ctx, s.cfg); err != nil {
		var oe *oauth.Error
		if !errors.As(err, &oe) {
			oe = &oauth.Error{Kind: oauth.KindToken, Msg: err.Error()}
		}
		msg := s.Redact(oe.Msg)
		if life.Err() != nil {
			return &oauth.Error{Kind: oe.Kind, Msg: msg}
		}
		st := StateNeedsLogin
		if oe.Kind == oauth.KindConfig {
			st = StateUnavailable
		}
		s.fail(st, loginHint(msg))
		return &oauth.Error{Kind: oe.Kind, Msg: msg}
	}
	s.connect(ctx, life)
	return nil
}

// loginSuffix is what loginHint adds.
const loginSuffix = "; run mcp/login to sign in"

// loginHint makes sure a sign-in problem says how to try again.
func loginHint(msg string) string {
	if strings.Contains(msg, "mcp/login") {
		return msg
	}
	return msg + loginSuffix
}

// needsLoginKinds are the sign-in failures a new sign-in (mcp/login) can
// fix; the others (a configuration that cannot work, unusable metadata, a
// busy callback port, an unwritable KIN_HOME) leave the server unavailable.
var needsLoginKinds = map[oauth.Kind]bool{
	oauth.KindNeedsLogin:   true,
	oauth.KindDenied:       true,
	oauth.KindTimeout:      true,
	oauth.KindToken:        true,
	oauth.KindIssuer:       true,
	oauth.KindRegistration: true,
	oauth.KindUnauthorized: true, // a server without "auth": "oauth" refused its static credentials
}

// connectFailure maps a connect error to the state and message to report.
func (s *server) connectFailure(err error) (State, string) {
	var oe *oauth.Error
	if errors.As(err, &oe) {
		st := StateUnavailable
		if needsLoginKinds[oe.Kind] {
			st = StateNeedsLogin
		}
		msg := s.Redact(oe.Msg)
		if st == StateNeedsLogin && oe.Kind != oauth.KindUnauthorized {
			msg = loginHint(msg)
		}
		return st, msg
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch {
		case ce.Kind == connect.KindAuth:
			return StateNeedsLogin, err.Error()
		case ce.Kind == connect.KindTimeout && s.cfg.Auth == "oauth":
			// The connect's own deadline ended a sign-in: the sign-in's
			// last error says why it did not finish.
			if last := s.m.oauth.Status(s.cfg).LastError; last != "" {
				return StateNeedsLogin, loginHint(s.Redact(last))
			}
		}
	}
	return StateUnavailable, err.Error()
}
