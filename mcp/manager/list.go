package manager

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
)

// Row is one server in List (package rpc maps it onto mcp/list's rows). It
// holds no secret.
type Row struct {
	Name      string
	Scope     string
	Transport string
	Enabled   bool
	State     State
	Tools     int
	LastError string
	Launch    string
	Env       []string // "KEY=●●●●"
	Headers   []string // "Name: ●●●●"
	Auth      string
	OAuth     *OAuthRow // set for an enabled "auth": "oauth" server
	Trusted   bool
	File      string
	// Instructions are the server's instructions as of its last
	// connection (redacted); InstructionsHash names them for
	// AcceptInstructions; InstructionsPending says they changed since the
	// person accepted them and are withheld from the model.
	Instructions        string
	InstructionsHash    string
	InstructionsPending bool
}

// OAuthRow is the OAuth sign-in of a server as mcp/list shows it: public
// values only, never a token or a secret.
type OAuthRow struct {
	// ClientID is the configured public client id (oauth.clientId); ""
	// means kin registers a client dynamically.
	ClientID string
	// RedirectURI is the loopback redirect URI kin sends, the one a
	// provider must have registered (the port reads <ephemeral> when kin
	// picks one).
	RedirectURI string
	// SignedIn is set when a usable sign-in is stored: connecting needs no
	// person.
	SignedIn bool
}

// ListResult is every configured server, as mcp/list shows them.
type ListResult struct {
	Servers  []Row
	Shadowed []Row    // global entries hidden by a project entry
	Foreign  []Row    // root .mcp.json entries, never loaded
	Warnings []string // one per skipped entry, unreadable file or tool left out
	Notices  []string
}

// List describes every configured server as of the last Load, Start or
// Apply.
func (m *Manager) List() ListResult {
	m.mu.Lock()
	cfg, starting := m.cfg, m.loaded
	m.mu.Unlock()
	r := ListResult{Servers: []Row{}, Foreign: []Row{}, Warnings: []string{}, Notices: []string{}}
	if cfg == nil {
		return r
	}
	for _, sc := range cfg.Servers {
		row := m.row(sc)
		if s := m.server(sc.Name); s != nil && sameServer(s.cfg, sc) {
			row.State, row.LastError, row.Tools = s.snapshot()
			in := s.instructionsRow()
			row.Instructions, row.InstructionsHash, row.InstructionsPending = in.text, in.hash, in.pending
			for _, o := range s.omittedTools() {
				r.Warnings = append(r.Warnings, omittedWarning(row.Name, o))
			}
		} else if row.Enabled && starting {
			row.State = StateConnecting // Start is about to connect it
		} else if row.Enabled {
			row.State, row.LastError = StateStopped, "changed since the last apply: run mcp/apply to connect it"
		}
		r.Servers = append(r.Servers, row)
	}
	for _, sc := range cfg.Shadowed {
		r.Shadowed = append(r.Shadowed, m.row(sc))
	}
	for _, sc := range cfg.Foreign {
		row := m.row(sc)
		row.Enabled = false
		r.Foreign = append(r.Foreign, row)
	}
	for _, w := range cfg.Warnings {
		r.Warnings = append(r.Warnings, w.String())
		// A skipped entry still gets a row, so a manager can show, fix or
		// remove it rather than lose it to a warning line.
		if w.Server != "" && !hasRow(r.Servers, w.Server) && w.File != config.ForeignPath(m.opts.Workdir) {
			scope := config.ScopeGlobal
			if w.File == config.ProjectPath(m.opts.Workdir) {
				scope = config.ScopeProject
			}
			r.Servers = append(r.Servers, Row{Name: w.Server, Scope: string(scope), Enabled: true,
				State: StateUnavailable, LastError: "not loaded: " + w.Problem, File: w.File})
		}
	}
	r.Notices = append(r.Notices, cfg.Notices...)
	return r
}

func hasRow(rows []Row, name string) bool {
	for _, r := range rows {
		if r.Name == name {
			return true
		}
	}
	return false
}

func (m *Manager) row(sc config.Server) Row {
	d := sc.Display()
	return Row{
		Name: d.Name, Scope: string(sc.Scope), Transport: string(sc.Transport), Enabled: !sc.Disabled,
		Launch: d.Launch, Env: d.Env, Headers: d.Headers, Auth: d.Auth, OAuth: m.oauthRow(sc),
		Trusted: sc.Connectable() && m.trust.IsTrusted(m.launchOf(sc)), File: sc.File,
	}
}

// oauthRow describes the sign-in of an enabled OAuth server (nil for any
// other: a disabled, shadowed or foreign entry is not expanded).
func (m *Manager) oauthRow(sc config.Server) *OAuthRow {
	if sc.Auth != "oauth" || sc.Transport != config.TransportHTTP || !sc.Connectable() {
		return nil
	}
	st := m.oauth.Status(sc)
	return &OAuthRow{ClientID: st.ClientID, RedirectURI: st.RedirectURI, SignedIn: st.SignedIn}
}

func (m *Manager) server(name string) *server {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[name]
}

// CheckResult says whether one server is ready, and why (not).
type CheckResult struct {
	Name        string
	Ready       bool
	State       State
	Explanation string
}

// Check explains each server's readiness (name "" = every server). A
// connected server is pinged; nothing is launched or contacted that is not
// already connected.
func (m *Manager) Check(ctx context.Context, name string) []CheckResult {
	var out []CheckResult
	for _, s := range m.sorted() {
		if name != "" && s.cfg.Name != name {
			continue
		}
		out = append(out, s.check(ctx))
	}
	if name != "" && len(out) == 0 {
		out = append(out, CheckResult{Name: name, State: StateStopped, Explanation: fmt.Sprintf("no server named %q is configured", name)})
	}
	return out
}

// probe asks a connected server for a sign of life: a ping, or on the
// 2026-07-28 protocol, which has no ping, a tools/list. It returns what was
// asked.
func probe(ctx context.Context, cs *mcp.ClientSession) (string, error) {
	if r := cs.InitializeResult(); r != nil && r.ProtocolVersion >= "2026-07-28" {
		_, err := cs.ListTools(ctx, nil)
		return "a tools/list", err
	}
	return "a ping", cs.Ping(ctx, nil)
}

func (s *server) check(ctx context.Context) CheckResult {
	st, lastErr, n := s.snapshot()
	r := CheckResult{Name: s.disp.Name, State: st}
	if s.cfg.Auth == "oauth" && s.cfg.Connectable() && st != StateConnected && st != StateConnecting && st != StateDisabled {
		if info := s.m.oauth.Status(s.cfg); !info.SignedIn {
			// Say first what the person can do about it.
			r.Explanation = s.disp.Name + " uses OAuth and has no stored sign-in: run mcp/login"
			if info.Problem != "" {
				r.Explanation = s.disp.Name + " uses OAuth, which cannot work as configured: " + s.Redact(info.Problem)
			}
			if last := strings.TrimSuffix(lastErr, loginSuffix); last != "" && !strings.Contains(r.Explanation, last) {
				r.Explanation += " (last attempt: " + last + ")"
			}
			return r
		}
	}
	switch st {
	case StateConnected:
		cs, ok := s.Session()
		if !ok {
			r.Explanation = "not connected"
			break
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if what, err := probe(pctx, cs); err != nil {
			r.Explanation = "connected, but it does not answer " + what + ": " + s.redactErr(err)
			break
		}
		r.Ready = true
		r.Explanation = fmt.Sprintf("connected to %s with %d tools", s.disp.Launch, n)
		s.mu.Lock()
		if s.listen != "" {
			r.Explanation += "; " + s.listen
		}
		s.mu.Unlock()
	case StateDisabled:
		r.Explanation = "disabled in the configuration"
	case StateAwaitingTrust:
		r.Explanation = "waiting for the launch approval"
	case StateDenied:
		r.Explanation = "its launch was not approved; apply the configuration again to be asked again"
	case StateConnecting:
		r.Explanation = "connecting"
	case StateNeedsLogin:
		r.Explanation = "needs sign-in: " + lastErr
	case StateUnavailable:
		r.Explanation = "unavailable: " + lastErr
	default:
		r.Explanation = "not started; apply the configuration to start it"
	}
	return r
}
