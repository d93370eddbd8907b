package acp

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/rpc"
)

// clientServers checks the MCP servers a client passed and turns them into
// kin's (config.FromClient: the name rules, https only but to loopback,
// scope client). sse is refused (kin speaks http, the transport that
// replaced it, and says so in mcpCapabilities).
func (s *Server) clientServers(servers []MCPServer) ([]config.Server, error) {
	if len(servers) > 0 && s.opts.MCP == nil {
		return nil, invalid("invalid params: this kin runs no MCP servers")
	}
	var out []config.Server
	seen := map[string]bool{}
	for i, m := range servers {
		t := config.TransportStdio
		switch m.Type {
		case "", "stdio":
		case "http":
			t = config.TransportHTTP
		case "sse":
			return nil, invalid("invalid params: mcpServers[%d] (%s): sse servers are not supported (mcpCapabilities.sse is false); use http", i, m.Name)
		default:
			return nil, invalid("invalid params: mcpServers[%d] (%s): unknown type %q", i, m.Name, m.Type)
		}
		if seen[m.Name] {
			return nil, invalid("invalid params: mcpServers[%d]: a second server named %q", i, m.Name)
		}
		seen[m.Name] = true
		env, headers := map[string]string{}, map[string]string{}
		for _, e := range m.Env {
			env[e.Name] = e.Value
		}
		for _, h := range m.Headers {
			headers[h.Name] = h.Value
		}
		sc, err := config.FromClient(m.Name, t, m.Command, m.Args, env, m.URL, headers)
		if err != nil {
			return nil, invalid("invalid params: mcpServers[%d] (%s): %v", i, m.Name, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// attachMCP makes the session's servers from the client's. Nothing starts
// yet: they are asked for at the session's first prompt, in that session,
// so the person sees the request where it belongs.
func (s *Server) attachMCP(ss *session, servers []config.Server) {
	ss.mu.Lock()
	ss.servers = servers
	ss.mu.Unlock()
	if len(servers) == 0 {
		return
	}
	_, gate := s.service()
	m := rpc.NewMCPServers(front{s: s, sessionID: ss.id}, gate, rpc.MCPConfig{Home: s.opts.Home, Version: s.opts.Version,
		Workdir: ss.cwd(), Fixed: servers, LookupEnv: s.opts.MCP.LookupEnv, Builtins: s.builtins(), Logger: s.log, SessionID: ss.id, Sandbox: s.opts.Sandbox})
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
// session (agent.Options.SessionTools). A tool whose name the configured
// servers' tools took already is left out: the model sees each name once.
func (s *Server) sessionTools(sessionID string) []tool.Tool {
	s.mu.Lock()
	ss := s.sessions[sessionID]
	conn := s.mcp
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
	taken := map[string]bool{}
	if conn != nil {
		for _, t := range conn.Tools() {
			taken[t.Spec().Name] = true
		}
	}
	var out []tool.Tool
	for _, t := range m.Tools() {
		if !taken[t.Spec().Name] {
			out = append(out, t)
		}
	}
	return out
}

// front is kin acp's side of rpc's MCP adapter, for the configured
// servers (sessionID "") or one session's.
type front struct {
	s         *Server
	sessionID string
}

func (f front) session() string {
	if f.sessionID != "" {
		return f.sessionID
	}
	return f.s.askingSession()
}

func (f front) Elicit(ctx context.Context, r manager.ElicitRequest) manager.ElicitResult {
	if r.SessionID == "" {
		r.SessionID = f.session()
	}
	return f.s.elicit(ctx, r)
}

func (f front) Status(st rpc.MCPStatus) {
	f.s.log.Info("mcp status", zap.String("server", st.Server), zap.String("state", st.State), zap.Int("tools", st.Tools), zap.String("error", st.Error))
	if st.State == string(manager.StateDenied) || st.State == string(manager.StateUnavailable) {
		f.s.notice(f.session(), "warning", fmt.Sprintf("MCP server %s is %s: %s", st.Server, st.State, st.Error))
	}
}

func (f front) Notice(level, message string) { f.s.notice(f.session(), level, message) }

var _ rpc.MCPFront = front{}
