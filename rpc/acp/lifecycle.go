package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
)

// AuthMethodLogin is kin's one sign-in: `kin login`, which stores the
// model service's key in $KIN_HOME/settings.json.
const AuthMethodLogin = "kin-login"

func handleInitialize(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p InitializeRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	already := s.state != stateCreated
	s.mu.Unlock()
	if already {
		return nil, &jsonrpc2.Error{Code: rpc.CodeInvalidRequest, Message: "kin: initialize was already called on this connection"}
	}
	models, cfgErr := model.LoadCatalog(s.opts.Home, s.opts.Getenv)
	cfg := models.DefaultConfig()
	configured := cfgErr == nil && cfg.Missing() == ""
	s.mu.Lock()
	s.caps = p.ClientCapabilities // before the service: filesFor reads them
	s.mu.Unlock()
	svc, gate, broker, mcp := s.buildService(models)
	s.mu.Lock()
	s.svc, s.gate, s.asks, s.mcp, s.state = svc, gate, broker, mcp, stateInitialized
	s.modelConfigured = configured
	s.mu.Unlock()

	client := "unknown client"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	sbst, _ := s.opts.CommandSandbox().Expected() // never waits for the probe
	s.log.Info("initialized (ACP)", zap.String("client", client), zap.Int("clientProtocolVersion", p.ProtocolVersion),
		zap.Bool("modelConfigured", configured), zap.String("model", cfg.Model), zap.Bool("mcp", mcp != nil),
		zap.Bool("fsRead", p.ClientCapabilities.FS.ReadTextFile), zap.Bool("fsWrite", p.ClientCapabilities.FS.WriteTextFile),
		zap.String("sandbox", string(sbst.Mode)), zap.Bool("confined", sbst.Confined))

	modelInfo := map[string]any{"configured": configured, "model": cfg.Model}
	if m := missing(cfg, cfgErr); m != "" {
		modelInfo["missing"] = m
	}
	return InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: AgentCapabilities{
			LoadSession: true,
			// ACP asks this once, before any session: the default model's
			// answer (a session switched to a model without images refuses
			// image blocks, naming it).
			PromptCapabilities: PromptCapabilities{EmbeddedContext: true, Image: cfgErr == nil && !cfg.NoImages},
			MCPCapabilities:    MCPCapabilities{HTTP: mcp != nil},
			SessionCapabilities: SessionCapabilities{List: &Empty{}, Resume: &Empty{}, Close: &Empty{}, Delete: &Empty{},
				AdditionalDirectories: &Empty{}, Fork: &Empty{}},
			Auth: &AgentAuth{Logout: &Empty{}},
		},
		AuthMethods: authMethods(p.ClientCapabilities),
		AgentInfo:   Implementation{Name: "kin", Title: "kin", Version: s.opts.Version},
		Meta:        Meta{"kin": map[string]any{"model": modelInfo, "sandbox": sbst.Summary()}},
	}, nil
}

// authMethods offers `kin login`: run by the client in a terminal when it
// can (it appends the args to the configured `kin acp`), else described,
// with authenticate checking that a key is now configured.
func authMethods(caps ClientCapabilities) []AuthMethod {
	if caps.Auth.Terminal {
		return []AuthMethod{{ID: AuthMethodLogin, Type: "terminal", Name: "Sign in with an API key",
			Description: "Runs kin login, which stores the model service's key in $KIN_HOME/settings.json (readable by you only).",
			Args:        []string{"login"}}}
	}
	return []AuthMethod{{ID: AuthMethodLogin, Name: "API key",
		Description: "Run `kin login` in a terminal (it stores the key in $KIN_HOME/settings.json), or set OPENAI_API_KEY for the editor; then sign in again."}}
}

// handleAuthenticate checks that a model service is configured (kin login
// ran, or the environment has a key) and makes it the one turns use. kin
// never requires it: with a key configured, sessions work without it.
func handleAuthenticate(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p AuthenticateRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.MethodID != AuthMethodLogin {
		return nil, invalid("invalid params: unknown methodId %q; kin offers %q", p.MethodID, AuthMethodLogin)
	}
	if err := s.ensureModel(); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

// handleLogout is ACP's logout: kin forgets the key `kin login` stored
// ($KIN_HOME/settings.json's openaiApiKey, for every kin of the person:
// signing out is of the person, not of one connection), stops this
// connection's running turns, and, when that key was what turns used,
// answers new sessions and prompts auth_required (-32000) until the person
// signs in again (authenticate, or a prompt, then finds the new key). A key
// in kin's environment (OPENAI_API_KEY) is not kin's to forget: the
// answer's _meta.kin.message says it is still used.
func handleLogout(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	removed, err := settings.ForgetKey(s.opts.Home)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	svc := s.svc
	var ids []string
	for id := range s.sessions {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.cancelTurn(id)
	}
	models, cerr := model.LoadCatalog(s.opts.Home, s.opts.Getenv)
	still := missing(models.DefaultConfig(), cerr) == ""
	if !still {
		s.mu.Lock()
		s.modelConfigured = false // ensureModel asks again; the old service's clients keep no say
		s.mu.Unlock()
	}
	s.log.Info("logged out", zap.Bool("forgotStoredKey", removed), zap.Bool("stillConfigured", still), zap.Bool("service", svc != nil))
	msg := "kin forgot the stored key; sign in again to start sessions"
	switch {
	case still && s.opts.Getenv("OPENAI_API_KEY") != "":
		msg = "kin forgot the stored key, but OPENAI_API_KEY is set in kin's environment and is still used"
	case still:
		msg = "kin forgot the stored key; the default model's own key is still configured and used"
	case !removed:
		msg = "kin had no stored key; sign in to start sessions"
	}
	return LogoutResponse{Meta: Meta{"kin": map[string]any{"message": msg}}}, nil
}

func missing(cfg model.Config, err error) string {
	if err != nil {
		return err.Error()
	}
	if m := cfg.Missing(); m != "" {
		return m + ", or run `kin login`"
	}
	return ""
}

// ensureModel makes sure turns can run: when the service started without
// a model service and one is configured now (`kin login` ran meanwhile),
// the service is built again with it. No turn can have run on the old one,
// so nothing is lost: its sessions are opened again by the new one. Once
// the service has a model service, the settings are not read again: every
// session/new and prompt asks this.
func (s *Server) ensureModel() error {
	s.mu.Lock()
	configured := s.modelConfigured
	s.mu.Unlock()
	if configured {
		return nil
	}
	models, err := model.LoadCatalog(s.opts.Home, s.opts.Getenv)
	if m := missing(models.DefaultConfig(), err); m != "" {
		return &jsonrpc2.Error{Code: CodeAuthRequired, Message: fmt.Sprintf("%v: %s", agent.ErrNotConfigured, m)}
	}
	svc, gate, broker, mcp := s.buildService(models)
	s.mu.Lock()
	if s.modelConfigured { // another request did it first
		s.mu.Unlock()
		broker.Close(permission.ReasonShutdown)
		svc.Shutdown()
		if mcp != nil {
			mcp.Close()
		}
		return nil
	}
	oldSvc, oldBroker, oldMCP := s.svc, s.asks, s.mcp
	s.svc, s.gate, s.asks, s.mcp, s.modelConfigured = svc, gate, broker, mcp, true
	s.mcpStarted = nil // the new manager starts at the next prompt
	s.mu.Unlock()
	s.log.Info("a model service is configured now; the agent starts again with it", zap.String("model", models.Default))
	oldSvc.Stopping() // before the questions are withdrawn: see Service.Stopping
	oldBroker.Close(permission.ReasonShutdown)
	oldSvc.Shutdown()
	if oldMCP != nil {
		oldMCP.Close()
	}
	// Sessions open here (signed in again after a logout) go on with the
	// new agent: the new one opens their logs when next asked, and the
	// servers their client passed are made again under its gate, to be
	// started at their next prompt.
	s.mu.Lock()
	var open []*session
	for _, ss := range s.sessions {
		open = append(open, ss)
	}
	s.mu.Unlock()
	for _, ss := range open {
		ss.closeMCP()
		ss.mu.Lock()
		servers := ss.servers
		ss.mcpStarted = false
		ss.mu.Unlock()
		s.attachMCP(ss, servers)
	}
	return nil
}

// buildService makes the agent for this connection: its broker (every
// question to the person), gate, tools and configured MCP servers.
func (s *Server) buildService(models model.Catalog) (*agent.Service, *permission.Gate, *ask.Broker, *rpc.MCPServers) {
	grants, gerr := permission.LoadGrants(filepath.Join(s.opts.Home, "grants.json"))
	if gerr != nil {
		s.log.Warn("grants", zap.Error(gerr))
	}
	broker := ask.New(asker{s})
	gate := permission.NewGate(broker, grants)
	builtins := s.builtins()
	var mcp *rpc.MCPServers
	if s.opts.MCP != nil {
		mcp = rpc.NewMCPServers(front{s: s}, gate, rpc.MCPConfig{Home: s.opts.Home, Version: s.opts.Version, Workdir: s.opts.Cwd,
			LookupEnv: s.opts.MCP.LookupEnv, Builtins: builtins, Logger: s.log, Sandbox: s.opts.Sandbox})
	}
	sources := rpc.MultiSource{tool.Static(builtins)}
	if mcp != nil {
		sources = append(sources, mcp)
	}
	opts := agent.Options{
		Home: s.opts.Home, Models: models, HTTPClient: s.opts.HTTPClient,
		Tools: sources, Events: events{s}, Gate: gate, Logger: s.log,
		Files:          s.filesFor,
		SessionTools:   s.sessionTools,
		Asker:          kinAsker{s: s, broker: broker},
		Commands:       s.frontCommands(gate),
		SessionPrompts: s.sessionPrompts,
	}
	if mcp != nil {
		opts.Prompts = mcp
		opts.MCPSkills = rpc.MCPSkillsOf(mcp)
		// Tasks a stopped kin left running are followed on session/load, as
		// kin serve does: the call's update arrives as a tool_call_update.
		opts.Tasks = mcp
	}
	svc := agent.New(opts)
	return svc, gate, broker, mcp
}

// builtins are kin's own tools.
func (s *Server) builtins() []tool.Tool {
	if s.opts.Tools == nil {
		return nil
	}
	return s.opts.Tools([]string{s.opts.Cwd})
}
