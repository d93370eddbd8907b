package acp

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
	kinsession "github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/rpc"
)

// kin's slash commands in ACP: the session's commands (kin serve's
// commands/list, with the prompts of the session's own MCP servers) go to
// the client as available_commands_update when the session opens and
// whenever a server's prompts change (kin serve's commands/changed); a
// prompt whose text starts with /name runs the command as kin serve's
// turn/start does.

// availableCommands is the session's commands as ACP's.
func (s *Server) availableCommands(ss *session) AvailableCommandsUpdate {
	svc, _ := s.service()
	out := AvailableCommandsUpdate{SessionUpdate: UpdateCommands, AvailableCommands: []AvailableCommand{}}
	for _, c := range svc.SessionCommands(ss.id) {
		ac := AvailableCommand{Name: c.Name, Description: c.Description}
		if ac.Description == "" {
			ac.Description = "/" + c.Name // ACP wants one; an MCP prompt may have none
		}
		if c.InputHint != "" {
			ac.Input = &CommandInput{Hint: c.InputHint}
		}
		out.AvailableCommands = append(out.AvailableCommands, ac)
	}
	return out
}

// commandsChanged tells the client a session's commands.
func (s *Server) commandsChanged(ss *session) {
	s.update(ss.id, s.availableCommands(ss))
}

// PromptsChanged implements rpc.PromptsFront: the servers' prompts changed
// (one came up, listed them again, went away), so the sessions that see
// them are told their commands again: every open one for the configured
// servers, the session's own for a client's servers.
func (f front) PromptsChanged() {
	f.s.mu.Lock()
	var sessions []*session
	for id, ss := range f.s.sessions {
		if f.sessionID == "" || id == f.sessionID {
			sessions = append(sessions, ss)
		}
	}
	f.s.mu.Unlock()
	for _, ss := range sessions {
		f.s.commandsChanged(ss)
	}
}

var _ rpc.PromptsFront = front{}

// command finds the command a prompt is: a text block first that names
// one (agent.ParseCommand). ok is false for a question; unescaped is then
// the first block's text when "//" escaped a question that starts with a
// slash ("" when nothing was escaped).
func command(blocks []json.RawMessage) (input string, ok bool, unescaped string) {
	if len(blocks) == 0 {
		return "", false, ""
	}
	var c ContentBlock
	if json.Unmarshal(blocks[0], &c) != nil || c.Type != contentTypeText {
		return "", false, ""
	}
	_, _, isCommand, text := agent.ParseCommand(c.Text)
	if isCommand || text == c.Text {
		text = ""
	}
	return c.Text, isCommand, text
}

// runCommand runs a prompt's /command: kin's own answer as the agent's
// message (with what it changed: the mode in both views, the plan), an
// MCP prompt's text asked as the turn's question (ask is then that text).
// A command takes its text only: other blocks are refused, naming them.
func (s *Server) runCommand(ctx context.Context, ss *session, input string, blocks []json.RawMessage) (name, ask string, rv *agent.Review, err error) {
	if len(blocks) > 1 {
		return "", "", nil, invalid("invalid params: prompt[1]: a /command takes no other blocks (kin runs %s on its own)", input)
	}
	svc, _ := s.service()
	r, err := svc.RunCommand(ctx, ss.id, input, ss.roots)
	if err != nil {
		return "", "", nil, err
	}
	if r.Review != nil {
		// /review: what is reviewed, as the agent's message; its turn runs
		// as the prompt's, findings arriving as text (events.Finding).
		s.update(ss.id, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock(r.Text + "\n")})
		return r.Name, "", r.Review, nil
	}
	s.log.Info("command", zap.String("session", ss.id), zap.String("command", r.Name), zap.Bool("asks", r.Ask != ""))
	if r.Ask != "" {
		// What reaches the model is the prompt's text, not the /name the
		// person typed: the client shows it as the person's message (a
		// replay shows it so too).
		s.update(ss.id, ContentChunk{SessionUpdate: UpdateUserMessage, Content: TextBlock(r.Ask)})
		return r.Name, r.Ask, nil, nil
	}
	switch d := r.Data.(type) {
	case agent.Configured:
		s.configured(ss, d)
	case []kinsession.PlanEntry:
		s.update(ss.id, planUpdate(d))
	}
	s.update(ss.id, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock(r.Text)})
	return r.Name, "", nil, nil
}

// planUpdate is ACP's plan update: the whole plan each time. ACP wants
// every step's priority; one the model gave none is medium.
func planUpdate(entries []kinsession.PlanEntry) Plan {
	p := Plan{SessionUpdate: UpdatePlan, Entries: make([]PlanEntry, 0, len(entries))}
	for _, x := range entries {
		pr := x.Priority
		if pr == "" {
			pr = "medium"
		}
		p.Entries = append(p.Entries, PlanEntry{Content: x.Content, Priority: pr, Status: x.Status})
	}
	return p
}

// frontCommands are /grants and /mcp over this connection's gate and the
// servers a session sees (the configured ones, then the client's).
func (s *Server) frontCommands(gate *permission.Gate) []agent.FrontCommand {
	return append(s.grantsAndMCP(gate), rpc.TrustCommand(s.opts.Home))
}

// grantsAndMCP are /grants and /mcp.
func (s *Server) grantsAndMCP(gate *permission.Gate) []agent.FrontCommand {
	return rpc.FrontCommands(func() *permission.Gate { return gate }, func(sessionID string) []*rpc.MCPServers {
		s.mu.Lock()
		var out []*rpc.MCPServers
		if s.mcp != nil {
			out = append(out, s.mcp)
		}
		ss := s.sessions[sessionID]
		s.mu.Unlock()
		if ss != nil {
			ss.mu.Lock()
			if ss.mcp != nil {
				out = append(out, ss.mcp)
			}
			ss.mu.Unlock()
		}
		return out
	})
}

// sessionPrompts are the prompts of the servers the client passed for a
// session (agent.Options.SessionPrompts).
func (s *Server) sessionPrompts(sessionID string) agent.Prompts {
	s.mu.Lock()
	ss := s.sessions[sessionID]
	s.mu.Unlock()
	if ss == nil {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.mcp == nil {
		return nil // not a typed nil: the agent tells none from some
	}
	return ss.mcp
}
