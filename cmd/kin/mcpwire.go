package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/oauth"
	"github.com/kin-dev/kin/mcp/trust"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/acp"
)

// mcpFactory builds, for each editor connection, an MCP manager for the
// first workspace folder and adapts it to the protocol. The adapter is the
// only place that knows both the mcp packages and rpc's shapes.
func mcpFactory(log *zap.Logger, home string, reserved []string) rpc.MCPFactory {
	return func(roots []string, h rpc.MCPHost) rpc.MCP {
		wd := ""
		if len(roots) > 0 {
			wd = roots[0]
		}
		m := manager.New(manager.Options{
			Workdir:  wd,
			KinHome:  home,
			Host:     mcpHost{h},
			Logger:   log.Named("mcp"),
			Env:      os.LookupEnv,
			Reserved: reserved,
			Version:  version,
		})
		store := config.NewStore(wd, home)
		store.Moved = func(name string, moved []string) {
			h.Notice("info", fmt.Sprintf("MCP server %s: kept out of %s (a file people commit): %s; the values are stored in %s (0600) for this project",
				name, config.ProjectPath(wd), strings.Join(moved, ", "), config.SecretsPath(home)))
		}
		return &mcpAdapter{m: m, store: store, trust: trust.Open(home)}
	}
}

// mcpAdapter implements rpc.MCP.
type mcpAdapter struct {
	m     *manager.Manager
	store *config.Store
	trust *trust.Store
}

func (a *mcpAdapter) Tools() []tool.Tool        { return a.m.Tools() }
func (a *mcpAdapter) Start(ctx context.Context) { a.m.Start(ctx) }
func (a *mcpAdapter) List() any                 { return a.m.List() }
func (a *mcpAdapter) Close()                    { a.m.Close() }

func (a *mcpAdapter) Edit(ctx context.Context, e rpc.MCPEdit) error {
	sc := config.Scope(e.Scope)
	var err error
	switch e.Op {
	case "add":
		if sc == "" {
			sc = config.ScopeProject
		}
		err = a.store.Add(sc, e.Name, e.Config)
	case "update":
		if sc, err = a.scopeOf(sc, e.Name); err == nil {
			err = a.store.Update(sc, e.Name, e.Config)
		}
	case "remove":
		if sc, err = a.scopeOf(sc, e.Name); err == nil {
			err = a.store.Remove(sc, e.Name)
		}
	case "setEnabled":
		err = a.store.SetEnabled(sc, e.Name, *e.Enabled)
	case "adopt":
		err = a.store.Adopt(e.Name)
	default:
		err = fmt.Errorf("unknown edit %q", e.Op)
	}
	if errors.Is(err, config.ErrBadName) {
		return &jsonrpc2.Error{Code: rpc.CodeInvalidParams, Message: err.Error()}
	}
	if err != nil {
		return err
	}
	return a.m.Refresh()
}

// scopeOf finds the scope of an existing server when the editor gave none.
func (a *mcpAdapter) scopeOf(sc config.Scope, name string) (config.Scope, error) {
	if sc != "" {
		return sc, nil
	}
	for _, r := range a.m.List().Servers {
		if r.Name == name {
			return config.Scope(r.Scope), nil
		}
	}
	return "", fmt.Errorf("%w: no server named %q", config.ErrNotFound, name)
}

type applyResult struct {
	Servers []manager.Row `json:"servers"`
}

func (a *mcpAdapter) Apply(ctx context.Context) (any, error) {
	if err := a.m.Apply(ctx); err != nil {
		return nil, err
	}
	rows := a.m.List().Servers
	if rows == nil {
		rows = []manager.Row{}
	}
	return applyResult{Servers: rows}, nil
}

type checkResult struct {
	Results []manager.CheckResult `json:"results"`
}

func (a *mcpAdapter) Check(ctx context.Context, name string) (any, error) {
	res := a.m.Check(ctx, name)
	if res == nil {
		res = []manager.CheckResult{}
	}
	return checkResult{Results: res}, nil
}

type loginResult struct {
	State manager.State `json:"state"`
}

// Login signs in to an OAuth server and reconnects it; the answer is the
// server's state afterwards. An unknown name is -32013; a server that
// cannot sign in as configured (not an OAuth server, disabled, a refused
// client registration) -32014; a sign-in that did not finish (declined,
// timed out, refused) -32603 with the reason and the fix.
func (a *mcpAdapter) Login(ctx context.Context, name string) (any, error) {
	if err := a.m.Login(ctx, name); err != nil {
		var oe *oauth.Error
		switch {
		case errors.Is(err, manager.ErrUnknownServer):
			return nil, &jsonrpc2.Error{Code: rpc.CodeNotFound, Message: err.Error()}
		case errors.As(err, &oe) && (oe.Kind == oauth.KindConfig || oe.Kind == oauth.KindRegistration):
			return nil, &jsonrpc2.Error{Code: rpc.CodeConfigError, Message: oe.Msg}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, &jsonrpc2.Error{Code: rpc.CodeInternalError, Message: "sign-in to " + name + " did not finish: " + err.Error()}
	}
	st := manager.StateStopped
	for _, r := range a.m.List().Servers {
		if r.Name == name {
			st = r.State
		}
	}
	return loginResult{State: st}, nil
}

func (a *mcpAdapter) TrustGrants() []permission.Grant {
	var out []permission.Grant
	for _, e := range a.trust.List() {
		out = append(out, permission.Grant{ID: "trust:" + e.Name, Type: "trust", Key: e.Name,
			Label: fmt.Sprintf("MCP server %s (%s: %s)", e.Name, e.Transport, e.Display), Scope: "permanent", Created: e.TrustedAt})
	}
	return out
}

func (a *mcpAdapter) RevokeTrust(name string) (bool, error) {
	err := a.trust.Revoke(name)
	if errors.Is(err, trust.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// mcpHost turns the manager's questions into protocol messages.
type mcpHost struct{ h rpc.MCPHost }

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
	out := h.h.ApproveLaunch(ctx, permission.Request{Approval: ap, Transport: r.Transport, Scope: r.Scope})
	return out.Decision, nil
}

func (h mcpHost) Elicit(ctx context.Context, r manager.ElicitRequest) (manager.ElicitResult, error) {
	req := rpc.ElicitationRequest{SessionID: r.SessionID, Server: r.Server, Mode: r.Mode, Purpose: r.Purpose, Message: r.Message, URL: r.URL}
	for _, f := range r.Fields {
		req.Fields = append(req.Fields, rpc.ElicitationField{Name: f.Name, Title: f.Title, Description: f.Description,
			Type: f.Type, Required: f.Required, Default: f.Default, Enum: f.Enum, EnumNames: f.EnumNames, Format: f.Format,
			Minimum: f.Minimum, Maximum: f.Maximum, MinLength: f.MinLength, MaxLength: f.MaxLength})
	}
	resp := h.h.Elicit(ctx, req)
	return manager.ElicitResult{Action: resp.Action, Content: resp.Content}, nil
}

type statusParams struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
}

func (h mcpHost) Status(s manager.Status) {
	h.h.Status(statusParams{Server: s.Server, State: string(s.State), Tools: s.Tools, Error: s.Error})
}
func (h mcpHost) Notice(level, message string)      { h.h.Notice(level, message) }
func (h mcpHost) RevokeGrant(key, keep string) bool { return h.h.RevokeGrant(key, keep) }

// sessionMCPFactory runs the MCP servers an ACP client passes for one
// session: a manager of their own (Fixed servers, scope client) under the
// same rules as configured ones, their names reserved against the built-in
// tools'.
func sessionMCPFactory(log *zap.Logger, home string, reserved []string) acp.SessionMCPFactory {
	return func(cwd string, servers []acp.MCPServer, h rpc.MCPHost) (rpc.MCP, error) {
		var fixed []config.Server
		for _, s := range servers {
			t := config.TransportStdio
			if s.Type == "http" {
				t = config.TransportHTTP
			}
			env, headers := map[string]string{}, map[string]string{}
			for _, e := range s.Env {
				env[e.Name] = e.Value
			}
			for _, hd := range s.Headers {
				headers[hd.Name] = hd.Value
			}
			sc, err := config.FromClient(s.Name, t, s.Command, s.Args, env, s.URL, headers)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", s.Name, err)
			}
			fixed = append(fixed, sc)
		}
		m := manager.New(manager.Options{
			Workdir:  cwd,
			KinHome:  home,
			Host:     mcpHost{h},
			Logger:   log.Named("mcp"),
			Env:      os.LookupEnv,
			Reserved: reserved,
			Version:  version,
			Fixed:    fixed,
		})
		return &mcpAdapter{m: m, store: config.NewStore(cwd, home), trust: trust.Open(home)}, nil
	}
}
