package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/trust"
)

// This file is the one adapter between the MCP manager and the protocol:
// the mcp/* handlers, the manager's Host (its questions become approvals
// and elicitations through the connection's broker, its states mcp/status,
// its notes notices) and the mapping of its rows onto wire types.

// MCPOptions configure the MCP servers of a connection.
type MCPOptions struct {
	// LookupEnv is the environment ${VAR} in the configuration expands
	// from, and what stdio servers may be given (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// mcpService is one connection's MCP manager and configuration stores.
type mcpService struct {
	m     *manager.Manager
	store *config.Store
	trust *trust.Store
}

// newMCP builds the manager for the first workspace folder. MCP tools may
// not take the built-in tools' names.
func newMCP(s *Server, gate *permission.Gate, roots []string, builtins []tool.Tool) *mcpService {
	wd := ""
	if len(roots) > 0 {
		wd = roots[0]
	}
	env := s.opts.MCP.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	reserved := append([]string(nil), agent.OwnToolNames...) // update_plan, ask
	for _, t := range builtins {
		reserved = append(reserved, t.Spec().Name)
	}
	m := manager.New(manager.Options{Workdir: wd, KinHome: s.opts.Home, Host: mcpHost{s, gate}, Logger: s.log.Named("mcp"),
		Env: env, Reserved: reserved, Version: s.opts.Version})
	store := config.NewStore(wd, s.opts.Home)
	store.Moved = func(name string, moved []string) {
		s.notify(NotifyNotice, Notice{Level: "info", Source: "mcp", Message: fmt.Sprintf(
			"MCP server %s: kept out of %s (a file people commit): %s; the values are stored in %s (0600) for this project",
			name, config.ProjectPath(wd), strings.Join(moved, ", "), config.SecretsPath(s.opts.Home))})
	}
	// Built in initialize, before any request can read the configuration;
	// Start (on initialized) connects and reports a configuration that
	// cannot be read.
	_ = m.Load()
	return &mcpService{m: m, store: store, trust: trust.Open(s.opts.Home)}
}

// mcpHost is what the manager asks of the editor.
type mcpHost struct {
	s    *Server
	gate *permission.Gate
}

// ApproveLaunch asks the person before a server is started or contacted.
func (h mcpHost) ApproveLaunch(ctx context.Context, r manager.LaunchRequest) (string, error) {
	verb := "Start"
	if r.Transport == "http" {
		verb = "Connect to"
	}
	ap := tool.Approval{Title: verb + " MCP server " + r.Server, Server: r.Server, Destination: r.Destination}
	var details []string
	for _, e := range r.Env {
		details = append(details, "env "+e)
	}
	for _, hd := range r.Headers {
		details = append(details, "header "+hd)
	}
	ap.Arguments = strings.Join(details, "\n")
	if r.Changed {
		ap.Warning = "This server's command, arguments, URL or environment changed since you trusted it."
	}
	out := h.gate.Ask(ctx, permission.Request{Kind: permission.KindLaunch, Approval: ap, Transport: r.Transport, Scope: r.Scope})
	return out.Decision, nil
}

func (h mcpHost) Elicit(ctx context.Context, r manager.ElicitRequest) (manager.ElicitResult, error) {
	return h.s.elicit(ctx, r), nil
}

func (h mcpHost) Status(st manager.Status) {
	h.s.log.Info("mcp status", zap.String("server", st.Server), zap.String("state", string(st.State)), zap.Int("tools", st.Tools))
	h.s.notify(NotifyMCPStatus, MCPStatus{Server: st.Server, State: string(st.State), Tools: st.Tools, Error: st.Error})
}

func (h mcpHost) Notice(level, message string) {
	h.s.notify(NotifyNotice, Notice{Level: level, Message: message, Source: "mcp"})
}

// RevokeGrant removes the "always allow" grants with key except those given
// for the definition keep ("" removes all), reporting whether one was.
func (h mcpHost) RevokeGrant(key, keep string) bool {
	removed, _ := h.gate.Grants().RevokeKey(key, keep)
	return removed
}

var errNoMCP = &jsonrpc2.Error{Code: CodeInternalError, Message: "MCP support is not available in this build"}

func (s *Server) mcpService() (*mcpService, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil {
		return nil, errNoMCP
	}
	return s.mcp, nil
}

func handleMCPList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	return mcpList(m.m.List()), nil
}

// mcpEdit decodes an edit's params into p, checks them and runs edit on
// the configuration; the live servers change on mcp/apply.
func mcpEdit[P any](check func(*P) error, edit func(*mcpService, *P) error) func(context.Context, *Server, json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
		var p P
		if err := decode(params, &p); err != nil {
			return nil, err
		}
		if err := check(&p); err != nil {
			return nil, err
		}
		m, err := s.mcpService()
		if err != nil {
			return nil, err
		}
		if err := edit(m, &p); err != nil {
			code := CodeConfigError
			switch {
			case errors.Is(err, config.ErrNotFound):
				code = CodeNotFound
			case errors.Is(err, config.ErrBadName):
				code = CodeInvalidParams
			}
			return nil, &jsonrpc2.Error{Code: int64(code), Message: err.Error()}
		}
		if err := m.m.Refresh(); err != nil {
			return nil, &jsonrpc2.Error{Code: CodeConfigError, Message: err.Error()}
		}
		return Empty{}, nil
	}
}

func needName(name string) error {
	if name == "" {
		return invalid("invalid params: name is required")
	}
	return nil
}

var (
	handleMCPAdd = mcpEdit(func(p *MCPAddParams) error { return needConfig(p) }, func(m *mcpService, p *MCPAddParams) error {
		sc := config.Scope(p.Scope)
		if sc == "" {
			sc = config.ScopeProject
		}
		return m.store.Add(sc, p.Name, p.Config)
	})
	handleMCPUpdate = mcpEdit(func(p *MCPAddParams) error { return needConfig(p) }, func(m *mcpService, p *MCPAddParams) error {
		sc, err := m.scopeOf(p.Scope, p.Name)
		if err != nil {
			return err
		}
		return m.store.Update(sc, p.Name, p.Config)
	})
	handleMCPRemove = mcpEdit(func(p *MCPRemoveParams) error { return needName(p.Name) }, func(m *mcpService, p *MCPRemoveParams) error {
		sc, err := m.scopeOf(p.Scope, p.Name)
		if err != nil {
			return err
		}
		return m.store.Remove(sc, p.Name)
	})
	handleMCPSetEnabled = mcpEdit(func(p *MCPSetEnabledParams) error {
		if p.Enabled == nil {
			return invalid("invalid params: enabled is required")
		}
		return needName(p.Name)
	}, func(m *mcpService, p *MCPSetEnabledParams) error {
		return m.store.SetEnabled(config.Scope(p.Scope), p.Name, *p.Enabled)
	})
	handleMCPAdopt = mcpEdit(func(p *MCPAdoptParams) error { return needName(p.Name) }, func(m *mcpService, p *MCPAdoptParams) error {
		return m.store.Adopt(p.Name)
	})
)

func needConfig(p *MCPAddParams) error {
	if err := needName(p.Name); err != nil {
		return err
	}
	if len(p.Config) == 0 {
		return invalid("invalid params: config is required")
	}
	return nil
}

// scopeOf finds the scope of an existing server when the editor gave none.
func (m *mcpService) scopeOf(scope, name string) (config.Scope, error) {
	if scope != "" {
		return config.Scope(scope), nil
	}
	for _, r := range m.m.List().Servers {
		if r.Name == name {
			return config.Scope(r.Scope), nil
		}
	}
	return "", fmt.Errorf("%w: no server named %q", config.ErrNotFound, name)
}

func handleMCPApply(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	if err := m.m.Apply(ctx); err != nil {
		return nil, &jsonrpc2.Error{Code: CodeConfigError, Message: err.Error()}
	}
	return MCPServersResult{Servers: mcpList(m.m.List()).Servers}, nil
}

func handleMCPReload(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	if svc, _ := s.service(); svc.Busy() {
		return nil, &jsonrpc2.Error{Code: CodeBusy, Message: "kin: mcp/reload is refused while a turn runs; try again when it has completed"}
	}
	return handleMCPApply(ctx, s, params)
}

func handleMCPCheck(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p MCPNameParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	out := MCPCheckResult{Results: []MCPCheck{}}
	for _, c := range m.m.Check(ctx, p.Name) {
		out.Results = append(out.Results, MCPCheck{Name: c.Name, Ready: c.Ready, State: string(c.State), Explanation: c.Explanation})
	}
	return out, nil
}

// handleMCPLogin signs in to an OAuth server and reconnects it; the answer
// is the server's state afterwards. An unknown name is -32013; a server
// that cannot sign in as configured (not an OAuth server, disabled, a
// refused client registration) -32014; a sign-in that did not finish
// (declined, timed out, refused) -32603 with the reason and the fix.
func handleMCPLogin(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p MCPNameParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := needName(p.Name); err != nil {
		return nil, err
	}
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	if err := m.m.Login(ctx, p.Name); err != nil {
		var oe *oauth.Error
		switch {
		case errors.Is(err, manager.ErrUnknownServer):
			return nil, &jsonrpc2.Error{Code: CodeNotFound, Message: err.Error()}
		case errors.As(err, &oe) && (oe.Kind == oauth.KindConfig || oe.Kind == oauth.KindRegistration):
			return nil, &jsonrpc2.Error{Code: CodeConfigError, Message: oe.Msg}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, &jsonrpc2.Error{Code: CodeInternalError, Message: "sign-in to " + p.Name + " did not finish: " + err.Error()}
	}
	st := manager.StateStopped
	for _, r := range m.m.List().Servers {
		if r.Name == p.Name {
			st = r.State
		}
	}
	return MCPLoginResult{State: string(st)}, nil
}

// trustGrants lists persistent server trust for grants/list.
func (m *mcpService) trustGrants() []Grant {
	var out []Grant
	for _, e := range m.trust.List() {
		out = append(out, Grant{ID: "trust:" + e.Name, Type: "trust", Key: e.Name,
			Label: fmt.Sprintf("MCP server %s (%s: %s)", e.Name, e.Transport, e.Display), Scope: "permanent", Created: e.TrustedAt})
	}
	return out
}

// revokeTrust forgets a server's trust; it reports whether there was one.
func (m *mcpService) revokeTrust(name string) (bool, error) {
	err := m.trust.Revoke(name)
	if errors.Is(err, trust.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func mcpList(l manager.ListResult) MCPListResult {
	out := MCPListResult{Servers: mcpRows(l.Servers), Foreign: mcpRows(l.Foreign), Warnings: []string{}, Notices: []string{}}
	if len(l.Shadowed) > 0 {
		out.Shadowed = mcpRows(l.Shadowed)
	}
	out.Warnings = append(out.Warnings, l.Warnings...)
	out.Notices = append(out.Notices, l.Notices...)
	return out
}

func mcpRows(rows []manager.Row) []MCPServerRow {
	out := []MCPServerRow{}
	for _, r := range rows {
		row := MCPServerRow{Name: r.Name, Scope: r.Scope, Transport: r.Transport, Enabled: r.Enabled, State: string(r.State),
			Tools: r.Tools, LastError: r.LastError, Launch: r.Launch, Env: r.Env, Headers: r.Headers, Auth: r.Auth,
			Trusted: r.Trusted, File: r.File}
		if r.OAuth != nil {
			row.OAuth = &MCPOAuth{ClientID: r.OAuth.ClientID, RedirectURI: r.OAuth.RedirectURI, SignedIn: r.OAuth.SignedIn}
		}
		out = append(out, row)
	}
	return out
}
