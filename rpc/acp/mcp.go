package acp

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
)

// SessionMCPFactory runs the MCP servers a client passed for one session,
// under kin's rules (launch approval with trust by launch identity, every
// call approved, all the MCP limits). cwd is the session's working
// directory; servers were checked by checkMCPServers.
type SessionMCPFactory func(cwd string, servers []MCPServer, h rpc.MCPHost) (rpc.MCP, error)

// checkMCPServers refuses what kin cannot run: sse (kin speaks http, the
// transport that replaced it, and says so in mcpCapabilities), a server
// without a name, or two of the same name.
func (s *Server) checkMCPServers(servers []MCPServer) ([]MCPServer, error) {
	seen := map[string]bool{}
	for i, m := range servers {
		switch m.Type {
		case "", "stdio":
			if m.Command == "" {
				return nil, invalid("invalid params: mcpServers[%d] (%s): command is required", i, m.Name)
			}
		case "http":
			if m.URL == "" {
				return nil, invalid("invalid params: mcpServers[%d] (%s): url is required", i, m.Name)
			}
		case "sse":
			return nil, invalid("invalid params: mcpServers[%d] (%s): sse servers are not supported (mcpCapabilities.sse is false); use http", i, m.Name)
		default:
			return nil, invalid("invalid params: mcpServers[%d] (%s): unknown type %q", i, m.Name, m.Type)
		}
		if m.Name == "" {
			return nil, invalid("invalid params: mcpServers[%d]: name is required", i)
		}
		if seen[m.Name] {
			return nil, invalid("invalid params: mcpServers[%d]: a second server named %q", i, m.Name)
		}
		seen[m.Name] = true
	}
	if len(servers) > 0 && s.opts.SessionMCP == nil {
		return nil, invalid("invalid params: this kin runs no MCP servers")
	}
	return servers, nil
}

// attachMCP makes the session's manager for the client's servers. Nothing
// starts yet: the servers are asked for at the session's first prompt, in
// that prompt's session, so the person sees the request where it belongs.
func (s *Server) attachMCP(ss *session, servers []MCPServer) {
	if len(servers) == 0 {
		return
	}
	_, gate := s.service()
	m, err := s.opts.SessionMCP(ss.cwd(), servers, mcpHost{s: s, gate: gate, sessionID: ss.id})
	if err != nil {
		s.notice(ss.id, "error", "MCP servers of this session: "+err.Error())
		return
	}
	ss.mu.Lock()
	ss.mcp = m
	ss.mu.Unlock()
}

// startMCP starts, before a prompt's turn, the configured servers (once per
// connection) and the session's own (once per session), and waits until
// they settled: launch approvals are asked in the prompt's session. A
// denied or broken server leaves its tools out; the turn goes on.
func (s *Server) startMCP(ctx context.Context, ss *session) {
	s.mu.Lock()
	conn := s.mcp
	started := s.mcpStarted
	first := started == nil && conn != nil
	if first {
		started = make(chan struct{})
		s.mcpStarted, s.launching = started, ss.id
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	if first {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(started)
			conn.Start(context.Background())
			s.mu.Lock()
			s.launching = ""
			s.mu.Unlock()
		}()
	}
	ss.mu.Lock()
	own := ss.mcp
	startOwn := own != nil && !ss.mcpStarted
	ss.mcpStarted = ss.mcpStarted || startOwn
	ss.mu.Unlock()
	if startOwn {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own.Start(context.Background())
		}()
	}
	wg.Wait()
	if started != nil && !first {
		select {
		case <-started:
		case <-ctx.Done():
		}
	}
}

// sessionTools are the tools of the servers the client passed for the
// session (agent.Options.SessionTools).
func (s *Server) sessionTools(sessionID string) []tool.Tool {
	s.mu.Lock()
	ss := s.sessions[sessionID]
	s.mu.Unlock()
	if ss == nil {
		return nil
	}
	ss.mu.Lock()
	m := ss.mcp
	ss.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Tools()
}

// mcpHost is what an MCP manager may ask of the client. sessionID is the
// session whose servers it runs ("" for the configured servers, whose
// questions go to the session whose prompt started them).
type mcpHost struct {
	s         *Server
	gate      *permission.Gate
	sessionID string
}

func (h mcpHost) ApproveLaunch(ctx context.Context, req permission.Request) permission.Outcome {
	req.Kind = permission.KindLaunch
	if req.SessionID == "" {
		req.SessionID = h.sessionID
	}
	return h.gate.Ask(ctx, req)
}

func (h mcpHost) Elicit(ctx context.Context, req rpc.ElicitationRequest) rpc.ElicitationResponse {
	if req.SessionID == "" {
		req.SessionID = h.session()
	}
	return h.s.elicit(ctx, req)
}

func (h mcpHost) session() string {
	if h.sessionID != "" {
		return h.sessionID
	}
	return h.s.askingSession()
}

func (h mcpHost) Status(v any) { h.s.log.Info("mcp status", zap.Any("status", v)) }

func (h mcpHost) Notice(level, message string) { h.s.notice(h.session(), level, message) }

func (h mcpHost) RevokeGrant(key, keep string) bool {
	removed, _ := h.gate.Grants().RevokeKey(key, keep)
	return removed
}
