package acp

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"
)

// MethodSessionFork is ACP's unstable session/fork, offered behind the
// session.fork capability.
const MethodSessionFork = "session/fork"

// ForkSessionRequest is session/fork's params (ACP's unstable schema). kin
// forks the session's whole history: ACP names no turn.
type ForkSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	MCPServers            []MCPServer `json:"mcpServers"`
}

// ForkSessionResponse is session/fork's result.
type ForkSessionResponse struct {
	SessionID     string             `json:"sessionId"`
	Modes         *SessionModeState  `json:"modes,omitempty"`
	Models        *SessionModelState `json:"models,omitempty"`
	ConfigOptions []ConfigOption     `json:"configOptions,omitempty"`
}

// handleSessionFork makes a new session from every ended turn of the
// original, with the original's model, mode and roots (kin's session/fork:
// the original is only read). The client's cwd serves a session recorded
// before sessions kept their roots; the client's MCP servers run for the
// fork as for session/new.
func handleSessionFork(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p ForkSessionRequest
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	roots, err := rootsOf(p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	servers, err := s.clientServers(p.MCPServers)
	if err != nil {
		return nil, err
	}
	if err := s.ensureModel(); err != nil {
		return nil, err
	}
	svc, _ := s.service()
	opened, err := svc.Fork(p.SessionID, "", roots)
	if err != nil {
		return nil, err
	}
	info := opened.Info
	if info.Cwd != "" {
		roots = append([]string{info.Cwd}, info.AdditionalDirectories...)
	}
	ss := newSession(info.SessionID, roots, opened)
	s.attachMCP(ss, servers)
	s.remember(ss)
	s.log.Info("session forked", zap.String("session", info.SessionID), zap.String("from", p.SessionID))
	return s.opened(ss, ForkSessionResponse{SessionID: info.SessionID, Modes: modeState(ss), Models: s.modelState(ss), ConfigOptions: s.configOptions(ss)}), nil
}
