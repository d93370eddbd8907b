package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kin-dev/kin/agent/sandbox"
	"os"
	"strings"
	"time"

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

// MCPServers is one front end's running MCP servers (a tool.Source for
// the agent) and their configuration stores: kin serve's connection has
// one for its configured servers; kin acp has one too, and one per session
// for the servers its client passed.
type MCPServers struct {
	m     *manager.Manager
	store *config.Store
	trust *trust.Store
}

// Tools implements tool.Source.
func (m *MCPServers) Tools() []tool.Tool { return m.m.Tools() }

// Start connects the trusted, enabled servers, asking for the rest; it
// returns once every server settled.
func (m *MCPServers) Start(ctx context.Context) { m.m.Start(ctx) }

// Arriving implements tool.Arriving: the servers still connecting.
func (m *MCPServers) Arriving() ([]string, time.Duration) { return m.m.Arriving() }

// AwaitArrived implements tool.Arriving.
func (m *MCPServers) AwaitArrived(ctx context.Context) { m.m.AwaitArrived(ctx) }

// Close stops every server.
func (m *MCPServers) Close() { m.m.Close() }

// Briefs implements tool.Briefing: the servers' instructions the model
// may have.
func (m *MCPServers) Briefs() []tool.Brief { return m.m.Briefs() }

// MCPFront is what the MCP adapter asks of the front end whose servers it
// runs (launch approvals go through the gate it is given).
type MCPFront interface {
	// Elicit puts a server's question to the person and waits.
	Elicit(ctx context.Context, r manager.ElicitRequest) manager.ElicitResult
	// Status reports a server's state change.
	Status(MCPStatus)
	// Notice is something the person should see.
	Notice(level, message string)
}

// MCPConfig says which MCP servers to run and how.
type MCPConfig struct {
	Home    string // KIN_HOME
	Version string // kin's, sent to servers
	// Workdir is the project folder whose .kin/mcp.json is read.
	Workdir string
	// Fixed, when set, are the only servers (an ACP client's for one
	// session) instead of the configuration files'.
	Fixed []config.Server
	// LookupEnv is the environment ${VAR} expands from, and what stdio
	// servers may be given (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Builtins are the built-in tools, whose names no MCP tool may take.
	Builtins []tool.Tool
	Logger   *zap.Logger
	// SessionID is the session the servers belong to (an ACP client's for
	// one session): their launch approvals are that session's. "" for a
	// connection's servers.
	SessionID string
	// Sandbox is the command sandbox stdio servers run in (issue 24 §8):
	// kin serve's and kin acp's (Options.Sandbox); nil runs them unconfined.
	Sandbox *sandbox.Sandbox
}

// NewMCPServers builds the MCP servers of a front end; nothing starts
// before Start.
func NewMCPServers(front MCPFront, gate *permission.Gate, c MCPConfig) *MCPServers {
	env := c.LookupEnv
	if env == nil {
		env = os.LookupEnv
	}
	reserved := append([]string(nil), agent.OwnToolNames...) // update_plan, ask
	for _, t := range c.Builtins {
		reserved = append(reserved, t.Spec().Name)
	}
	log := c.Logger
	if log == nil {
		log = zap.NewNop()
	}
	m := manager.New(manager.Options{Workdir: c.Workdir, KinHome: c.Home, Host: mcpHost{front, gate, c.SessionID}, Logger: log.Named("mcp"),
		Env: env, Reserved: reserved, Version: c.Version, Fixed: c.Fixed, Sandbox: c.Sandbox})
	store := config.NewStore(c.Workdir, c.Home)
	store.Moved = func(name string, moved []string) {
		front.Notice("info", fmt.Sprintf(
			"MCP server %s: kept out of %s (a file people commit): %s; the values are stored in %s (0600) for this project",
			name, config.ProjectPath(c.Workdir), strings.Join(moved, ", "), config.SecretsPath(c.Home)))
	}
	// Built in initialize, before any request can read the configuration;
	// Start (on initialized) connects and reports a configuration that
	// cannot be read.
	_ = m.Load()
	return &MCPServers{m: m, store: store, trust: trust.Open(c.Home)}
}

// newMCP builds kin serve's servers, for the first workspace folder.
func newMCP(s *Server, gate *permission.Gate, roots []string, builtins []tool.Tool) *MCPServers {
	wd := ""
	if len(roots) > 0 {
		wd = roots[0]
	}
	return NewMCPServers(serveFront{s}, gate, MCPConfig{Home: s.opts.Home, Version: s.opts.Version, Workdir: wd,
		LookupEnv: s.opts.MCP.LookupEnv, Builtins: builtins, Logger: s.log, Sandbox: s.opts.Sandbox})
}

// serveFront is kin serve's side of the adapter: questions through the
// connection's broker, states as mcp/status, notes as notices.
type serveFront struct{ s *Server }

func (f serveFront) Elicit(ctx context.Context, r manager.ElicitRequest) manager.ElicitResult {
	return f.s.elicit(ctx, r)
}

func (f serveFront) Status(st MCPStatus) {
	f.s.log.Info("mcp status", zap.String("server", st.Server), zap.String("state", st.State), zap.Int("tools", st.Tools))
	f.s.notify(NotifyMCPStatus, st)
}

func (f serveFront) Notice(level, message string) {
	f.s.notify(NotifyNotice, Notice{Level: level, Message: message, Source: "mcp"})
}

// mcpHost is what the manager asks of the front end.
type mcpHost struct {
	front     MCPFront
	gate      *permission.Gate
	sessionID string
}

// ApproveLaunch asks the person before a server is started or contacted.
func (h mcpHost) ApproveLaunch(ctx context.Context, r manager.LaunchRequest) (string, error) {
	verb := "Start"
	if r.Transport == "http" {
		verb = "Connect to"
	}
	ap := tool.Approval{Title: verb + " MCP server " + r.Server, Server: r.Server, Destination: r.Destination}
	var details []string
	if r.Program != "" {
		// The command line names a program the project itself holds.
		details = append(details, "program "+r.Program+" (a file of this project, found on the server's PATH)")
	}
	for _, e := range r.Env {
		details = append(details, "env "+e)
	}
	for _, hd := range r.Headers {
		details = append(details, "header "+hd)
	}
	ap.Arguments = strings.Join(details, "\n")
	ap.Cwd = r.Workdir
	ap.Warning = launchWarning(r)
	out := h.gate.Ask(ctx, permission.Request{Kind: permission.KindLaunch, SessionID: h.sessionID, Approval: ap,
		Transport: r.Transport, Scope: r.Scope, ReadOnlyTools: r.ReadOnlyTools})
	return out.Decision, nil
}

// launchWarning says what approving a launch means beyond starting it: why
// it is asked again, and which of its tools then run without asking
// (README and PROTOCOL.md: only a trusted server's read-only tools, only
// those listed here or, when kin has not seen its tools yet, in a notice
// when it connects; allowing it once lets none).
func launchWarning(r manager.LaunchRequest) string {
	var parts []string
	if r.Sandbox != "" {
		parts = append(parts, r.Sandbox)
	}
	if r.Changed {
		parts = append(parts, "Asked again: "+r.ChangedWhy+".")
	}
	switch {
	case r.ReadOnlyTools == nil:
		parts = append(parts, "kin has not seen this server's tools yet. If you trust it, the tools it declares read-only run without asking (a notice lists them once it is connected); every other call asks. Allowing it once lets none run unasked.")
	case len(r.ReadOnlyTools) == 0:
		parts = append(parts, "It declares no read-only tools: every call asks.")
	default:
		parts = append(parts, fmt.Sprintf("If you trust it, these tools it declares read-only run without asking: %s; every other call asks. Allowing it once lets none run unasked.", strings.Join(r.ReadOnlyTools, ", ")))
	}
	return strings.Join(parts, " ")
}

func (h mcpHost) Elicit(ctx context.Context, r manager.ElicitRequest) (manager.ElicitResult, error) {
	return h.front.Elicit(ctx, r), nil
}

func (h mcpHost) Status(st manager.Status) {
	h.front.Status(MCPStatus{Server: st.Server, State: string(st.State), Tools: st.Tools, Error: st.Error})
}

func (h mcpHost) Notice(level, message string) { h.front.Notice(level, message) }

// MCPElicitCompleter is an MCPFront that passes on a server's word that a
// URL-mode elicitation finished (kin acp: ACP's elicitation/complete; kin
// serve's protocol has no such notification, so its front is not one).
type MCPElicitCompleter interface {
	ElicitComplete(server, elicitationID string)
}

// ElicitComplete implements manager.ElicitCompleter.
func (h mcpHost) ElicitComplete(server, elicitationID string) {
	if c, ok := h.front.(MCPElicitCompleter); ok {
		c.ElicitComplete(server, elicitationID)
	}
}

// RevokeGrant removes the "always allow" grants with key except those given
// for the definition keep ("" removes all), reporting whether one was.
func (h mcpHost) RevokeGrant(key, keep string) bool {
	removed, _ := h.gate.Grants().RevokeKey(key, keep)
	return removed
}

var errNoMCP = &jsonrpc2.Error{Code: CodeInternalError, Message: "MCP support is not available in this build"}

func (s *Server) mcpService() (*MCPServers, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil {
		return nil, errNoMCP
	}
	return s.mcp, nil
}

// mcpServers is the connection's servers as grants/list and the front
// commands take them: none without MCP.
func (s *Server) mcpServers() []*MCPServers {
	m, err := s.mcpService()
	if err != nil {
		return nil
	}
	return []*MCPServers{m}
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
func mcpEdit[P any](check func(*P) error, edit func(*MCPServers, *P) error) func(context.Context, *Server, json.RawMessage) (any, error) {
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
	handleMCPAdd = mcpEdit(needConfig, func(m *MCPServers, p *MCPAddParams) error {
		sc := config.Scope(p.Scope)
		if sc == "" {
			sc = config.ScopeProject
		}
		return m.store.Add(sc, p.Name, p.Config)
	})
	handleMCPUpdate = mcpEdit(needConfig, func(m *MCPServers, p *MCPAddParams) error {
		sc, err := m.scopeOf(p.Scope, p.Name)
		if err != nil {
			return err
		}
		return m.store.Update(sc, p.Name, p.Config)
	})
	handleMCPRemove = mcpEdit(func(p *MCPRemoveParams) error { return needName(p.Name) }, func(m *MCPServers, p *MCPRemoveParams) error {
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
	}, func(m *MCPServers, p *MCPSetEnabledParams) error {
		return m.store.SetEnabled(config.Scope(p.Scope), p.Name, *p.Enabled)
	})
	handleMCPAdopt = mcpEdit(func(p *MCPAdoptParams) error { return needName(p.Name) }, func(m *MCPServers, p *MCPAdoptParams) error {
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
func (m *MCPServers) scopeOf(scope, name string) (config.Scope, error) {
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
func (m *MCPServers) trustGrants() []Grant {
	var out []Grant
	// One row per server name (trust:<name> revokes them all): a project
	// server trusted in several projects names each.
	rows := map[string]int{}
	for _, e := range m.trust.List() {
		if i, ok := rows[e.Name]; ok {
			if e.Project != "" {
				out[i].Label += ", " + e.Project
			}
			continue
		}
		label := fmt.Sprintf("MCP server %s (%s: %s)", e.Name, e.Transport, e.Display)
		if e.Project != "" {
			label += " in " + e.Project
		}
		rows[e.Name] = len(out)
		out = append(out, Grant{ID: "trust:" + e.Name, Type: "trust", Key: e.Name, Label: label, Scope: "permanent", Created: e.TrustedAt})
	}
	return out
}

// revokeTrust forgets a server's trust; it reports whether there was one.
func (m *MCPServers) revokeTrust(name string) (bool, error) {
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
			Trusted: r.Trusted, File: r.File,
			Instructions: r.Instructions, InstructionsHash: r.InstructionsHash, InstructionsPending: r.InstructionsPending}
		if r.OAuth != nil {
			row.OAuth = &MCPOAuth{ClientID: r.OAuth.ClientID, RedirectURI: r.OAuth.RedirectURI, SignedIn: r.OAuth.SignedIn}
		}
		out = append(out, row)
	}
	return out
}
