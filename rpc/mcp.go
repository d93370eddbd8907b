package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

// MCP is the server manager as the protocol sees it. cmd/kin adapts the
// mcp packages to it; rpc never imports them, so the wire stays the only
// place that knows JSON-RPC.
type MCP interface {
	tool.Source
	// Start connects the trusted, enabled servers (asking for the rest).
	Start(ctx context.Context)
	List() any
	Edit(ctx context.Context, e MCPEdit) error
	Apply(ctx context.Context) (any, error)
	Check(ctx context.Context, name string) (any, error)
	Login(ctx context.Context, name string) (any, error)
	// TrustGrants lists persistent server trust for grants/list.
	TrustGrants() []permission.Grant
	RevokeTrust(name string) (bool, error)
	Close()
}

// MCPEdit is one change to a configuration file.
type MCPEdit struct {
	Op      string          `json:"-"` // add, update, remove, setEnabled, adopt
	Scope   string          `json:"scope,omitempty"`
	Name    string          `json:"name"`
	Config  json.RawMessage `json:"config,omitempty"`
	Enabled *bool           `json:"enabled,omitempty"`
}

// MCPFactory builds the manager for a connection once the workspace
// folders are known.
type MCPFactory func(roots []string, h MCPHost) MCP

// MCPHost is what the manager may ask of the editor.
type MCPHost interface {
	// ApproveLaunch asks the person before a server is started or contacted.
	ApproveLaunch(ctx context.Context, req permission.Request) permission.Outcome
	Elicit(ctx context.Context, req ElicitationRequest) ElicitationResponse
	Status(v any)
	Notice(level, message string)
	// RevokeGrant removes the "always allow" grants with key except those
	// given for the definition keep ("" removes all), reporting whether
	// one was removed.
	RevokeGrant(key, keep string) bool
}

type host struct {
	s    *Server
	gate *permission.Gate
}

func (h host) ApproveLaunch(ctx context.Context, req permission.Request) permission.Outcome {
	req.Kind = permission.KindLaunch
	return h.gate.Ask(ctx, req)
}
func (h host) Elicit(ctx context.Context, req ElicitationRequest) ElicitationResponse {
	return h.s.elicit.Ask(ctx, req)
}
func (h host) Status(v any) {
	h.s.log.Info("mcp status", zap.Any("status", v))
	h.s.notify(NotifyMCPStatus, v)
}
func (h host) Notice(level, message string) {
	h.s.notify(NotifyNotice, agent.Notice{Level: level, Message: message, Source: "mcp"})
}
func (h host) RevokeGrant(key, keep string) bool {
	removed, _ := h.gate.Grants().RevokeKey(key, keep)
	return removed
}

var errNoMCP = &jsonrpc2.Error{Code: CodeInternalError, Message: "MCP support is not available in this build"}

func (s *Server) mcpManager() (MCP, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mcp == nil {
		return nil, errNoMCP
	}
	return s.mcp, nil
}

func handleMCPList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	m, err := s.mcpManager()
	if err != nil {
		return nil, err
	}
	return m.List(), nil
}

func mcpEdit(op string) func(context.Context, *Server, json.RawMessage) (any, error) {
	return func(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
		var e MCPEdit
		if err := decode(params, &e); err != nil {
			return nil, err
		}
		e.Op = op
		if e.Name == "" {
			return nil, invalid("invalid params: name is required")
		}
		if (op == "add" || op == "update") && len(e.Config) == 0 {
			return nil, invalid("invalid params: config is required")
		}
		if op == "setEnabled" && e.Enabled == nil {
			return nil, invalid("invalid params: enabled is required")
		}
		m, err := s.mcpManager()
		if err != nil {
			return nil, err
		}
		if err := m.Edit(ctx, e); err != nil {
			var re *jsonrpc2.Error
			if errors.As(err, &re) {
				return nil, err
			}
			return nil, &jsonrpc2.Error{Code: CodeConfigError, Message: err.Error()}
		}
		return Empty{}, nil
	}
}

var (
	handleMCPAdd        = mcpEdit("add")
	handleMCPUpdate     = mcpEdit("update")
	handleMCPRemove     = mcpEdit("remove")
	handleMCPSetEnabled = mcpEdit("setEnabled")
	handleMCPAdopt      = mcpEdit("adopt")
)

func handleMCPApply(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	m, err := s.mcpManager()
	if err != nil {
		return nil, err
	}
	return m.Apply(ctx)
}

func handleMCPReload(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	if svc, _ := s.service(); svc.Busy() {
		return nil, &jsonrpc2.Error{Code: CodeBusy, Message: "kin: mcp/reload is refused while a turn runs; try again when it has completed"}
	}
	return handleMCPApply(ctx, s, params)
}

type nameParams struct {
	Name string `json:"name"`
}

func handleMCPCheck(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p nameParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	m, err := s.mcpManager()
	if err != nil {
		return nil, err
	}
	return m.Check(ctx, p.Name)
}

func handleMCPLogin(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p nameParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, invalid("invalid params: name is required")
	}
	m, err := s.mcpManager()
	if err != nil {
		return nil, err
	}
	return m.Login(ctx, p.Name)
}
