package rpc

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

func handleInitialize(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p InitializeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	already := s.state != stateCreated
	s.mu.Unlock()
	if already {
		return nil, &jsonrpc2.Error{Code: CodeInvalidRequest, Message: "kin: initialize was already called on this connection"}
	}
	var docCaps TextDocumentsClientCapabilities
	if p.Capabilities != nil && p.Capabilities.TextDocuments != nil {
		docCaps = *p.Capabilities.TextDocuments
	}
	forms := p.Capabilities != nil && p.Capabilities.Elicitation != nil && p.Capabilities.Elicitation.Form
	// The editor's buffers, whether it syncs them or not: without sync
	// the overlay stays empty and every write goes to disk, followed by
	// workspace/didChangeFiles.
	buffers := &files.Buffers{Overlay: s.overlay, Editor: editorPort{s}, ApplyEdits: docCaps.Sync && docCaps.ApplyEdit, Timeout: s.opts.ApplyEditTimeout}
	roots := rootsOf(p, s.opts.Cwd)
	models, cfgErr := model.LoadCatalog(s.opts.Home, s.opts.Getenv)
	cfg := models.DefaultConfig()

	grants, gerr := permission.LoadGrants(filepath.Join(s.opts.Home, "grants.json"))
	gate := permission.NewGate(s.asks, grants)
	var builtins []tool.Tool
	if s.opts.Tools != nil {
		builtins = s.opts.Tools(roots)
	}
	sources := MultiSource{tool.Static(builtins)}
	var mcp *MCPServers
	if s.opts.MCP != nil {
		mcp = newMCP(s, gate, roots, builtins)
		sources = append(sources, mcp)
	}
	var skillSource agent.MCPSkills
	if mcp != nil {
		skillSource = mcpSkills{mcp}
	}
	svc := agent.New(agent.Options{
		Home: s.opts.Home, Models: models, HTTPClient: s.opts.HTTPClient,
		Tools: sources, Events: events{s}, Gate: gate, Logger: s.log,
		Files:    func(string) files.Access { return buffers },
		Commands: s.frontCommands(),
		Asker:    kinAsker{s},
		Prompts:  mcpPrompts(mcp),
		// Resources a question attaches (mcp_resources.go).
		Resources: mcpResources(mcp),
		Sandbox:   s.opts.CommandSandbox(),

		MCPSkills: skillSource,
		// Tasks a stopped kin left running, followed on resume (mcp_tasks.go).
		Tasks: mcpTasks(mcp),
	})
	s.mu.Lock()
	s.svc, s.gate, s.mcp, s.roots, s.state, s.docCaps, s.forms = svc, gate, mcp, roots, stateInitialized, docCaps, forms
	s.mu.Unlock()
	s.relay.Store(true)

	// Not Status: that would wait for the sandbox's probe, which runs
	// after the answer (the initialized notification's notices) or at the
	// first command.
	sbst, probed := s.opts.CommandSandbox().Expected()
	client := "unknown editor"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info("initialized", zap.String("client", client), zap.Strings("roots", roots),
		zap.Bool("modelConfigured", cfg.Missing() == ""), zap.String("model", cfg.Model), zap.Bool("mcp", mcp != nil),
		zap.String("sandbox", string(sbst.Mode)), zap.Bool("confined", sbst.Confined), zap.String("sandboxReason", sbst.Reason),
		zap.Bool("bufferSync", docCaps.Sync), zap.Bool("applyEdit", buffers.ApplyEdits))
	if gerr != nil {
		// Not on the read loop (initialize runs there): see Server.Handle.
		go s.notify(NotifyNotice, Notice{Level: "warning", Message: gerr.Error(), Source: "grants"})
	}
	// The address as the person may see it: a password or an api-key
	// query value in it never goes out (boundary.MaskURL).
	info := ModelInfo{Configured: cfg.Missing() == "", Model: cfg.Model, BaseURL: boundary.MaskURL(cfg.BaseURL), Missing: cfg.Missing()}
	if cfgErr != nil {
		info.Configured, info.Missing = false, cfgErr.Error()
	}
	return InitializeResult{
		ProtocolVersion: ProtocolVersion,
		ServerInfo:      ServerInfo{Name: "kin", Version: s.opts.Version},
		Capabilities: ServerCapabilities{Sessions: true, MCP: mcp != nil, Approvals: true, Elicitation: ElicitationCaps{Form: true, URL: true},
			TextDocuments: TextDocumentsServerCapabilities{Sync: docCaps.Sync, ApplyEdit: buffers.ApplyEdits, PositionEncoding: PositionEncoding}},
		Model:            info,
		WorkspaceFolders: roots,
		Sandbox:          sandboxInfo(sbst, probed),
	}, nil
}

func handleShutdown(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	s.teardown(permission.ReasonShutdown) // Handle marked the state: nothing new starts
	return nil, nil
}

// rootsOf decides the workspace folders: the editor's, else its rootUri or
// rootPath, else kin's working directory.
func rootsOf(p InitializeParams, cwd string) []string {
	var roots []string
	add := func(path string) {
		if path == "" {
			return
		}
		if abs, err := filepath.Abs(path); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			roots = append(roots, abs)
		}
	}
	for _, f := range p.WorkspaceFolders {
		add(pathOfURI(f.URI))
	}
	if len(roots) == 0 {
		add(pathOfURI(p.RootURI))
	}
	if len(roots) == 0 {
		add(p.RootPath)
	}
	if len(roots) == 0 {
		add(cwd)
	}
	return roots
}

func pathOfURI(uri string) string {
	if uri == "" {
		return ""
	}
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "file" && u.Scheme != "") {
		return ""
	}
	return u.Path
}

// MultiSource joins tool sources in order (built-ins first): kin serve's
// and kin acp's agent.
type MultiSource []tool.Source

// Tools implements tool.Source.
func (m MultiSource) Tools() []tool.Tool {
	var out []tool.Tool
	for _, s := range m {
		out = append(out, s.Tools()...)
	}
	return out
}

// Arriving implements tool.Arriving: what each source has on its way, and
// the longest any of it may take.
func (m MultiSource) Arriving() (names []string, within time.Duration) {
	for _, s := range m {
		if a, ok := s.(tool.Arriving); ok {
			n, w := a.Arriving()
			names = append(names, n...)
			within = max(within, w)
		}
	}
	return names, within
}

// Briefs implements tool.Briefing: every source's, in order.
func (m MultiSource) Briefs() []tool.Brief {
	var out []tool.Brief
	for _, s := range m {
		if b, ok := s.(tool.Briefing); ok {
			out = append(out, b.Briefs()...)
		}
	}
	return out
}

// AwaitArrived implements tool.Arriving.
func (m MultiSource) AwaitArrived(ctx context.Context) {
	for _, s := range m {
		if a, ok := s.(tool.Arriving); ok {
			a.AwaitArrived(ctx)
		}
	}
}
