package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
)

func handleCommandsList(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p CommandsListParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	svc, _ := s.service()
	out := CommandsListResult{Commands: []CommandInfo{}}
	for _, c := range svc.SessionCommands(p.SessionID) {
		ci := CommandInfo{Name: c.Name, Description: c.Description, InputHint: c.InputHint, Source: c.Source}
		for _, a := range c.Arguments {
			ci.Arguments = append(ci.Arguments, CommandArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out.Commands = append(out.Commands, ci)
	}
	return out, nil
}

// runCommand runs the command a turn/start's input names (see
// agent.RunCommand): kin's own answer at once, an MCP prompt's text is
// asked as a new turn's question.
func (s *Server) runCommand(ctx context.Context, sessionID, input string) (TurnStartResult, error) {
	svc, _ := s.service()
	r, err := svc.RunCommand(ctx, sessionID, input, s.workspace())
	if err != nil {
		return TurnStartResult{}, err
	}
	out := TurnStartResult{Command: &CommandResult{Name: r.Name, Text: r.Text, Result: commandData(r.Data)}}
	if r.Review != nil {
		if out.TurnID, err = s.startReview(svc, r.Review, true); err != nil {
			return TurnStartResult{}, err
		}
		res := reviewStarted(r.Review, out.TurnID)
		out.Command.Result = res
	}
	if r.Ask != "" {
		if out.TurnID, err = s.startTurn(svc, sessionID, agent.TextInput(r.Ask)); err != nil {
			return TurnStartResult{}, err
		}
		out.Command.Inserted = r.Ask
	}
	return out, nil
}

// commandData is a command's result on the wire.
func commandData(d any) any {
	switch v := d.(type) {
	case session.Undo:
		return undoResult(v)
	case agent.Configured:
		return configured(v)
	case agent.Compacted:
		return SessionCompactResult{Compacted: v.Done}
	case []session.PlanEntry:
		return PlanResult{Entries: planEntries(v)}
	case *agent.Review:
		return nil // the review's result, once its turn started
	case []agent.SkillInfo:
		return skillsResult(v) // agent's type has no wire names
	}
	return d // a front command's, already the wire's
}

func configured(c agent.Configured) SessionConfigureResult {
	return SessionConfigureResult{SessionID: c.SessionID, Mode: string(c.Mode), Model: c.Model, Effort: c.Effort}
}

func planEntries(es []session.PlanEntry) []PlanEntry {
	out := make([]PlanEntry, len(es))
	for i, e := range es {
		out[i] = PlanEntry{Content: e.Content, Status: e.Status, Priority: e.Priority}
	}
	return out
}

func undoResult(u session.Undo) TurnUndoResult {
	out := TurnUndoResult{TurnID: u.TurnID, Question: u.Question, Restored: append([]string{}, u.Restored...), Error: u.Error}
	for _, c := range u.Conflicts {
		out.Conflicts = append(out.Conflicts, UndoConflict{Path: c.Path, Reason: c.Reason, Diff: c.Diff})
	}
	for _, n := range u.NotUndoable {
		out.NotUndoable = append(out.NotUndoable, NotUndoable{CallID: n.CallID, Name: n.Name, Title: n.Title, Reason: n.Reason})
	}
	return out
}

func handleTurnUndo(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p TurnUndoParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	svc, _ := s.service()
	u, err := svc.Undo(ctx, p.SessionID, p.TurnID, s.workspace())
	if err != nil {
		return nil, err
	}
	return undoResult(u), nil
}

func handleSessionConfigure(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionConfigureParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	svc, _ := s.service()
	c, err := svc.Configure(p.SessionID, agent.SessionConfig{Mode: permission.Mode(p.Mode), Model: p.Model, Effort: p.Effort}, s.workspace())
	if err != nil {
		return nil, err
	}
	return configured(c), nil
}

// frontCommands are kin's commands whose views live here: /grants and
// /mcp answer what grants/list and mcp/list do, with a summary for a
// person.
func (s *Server) frontCommands() []agent.FrontCommand {
	return append(FrontCommands(func() *permission.Gate {
		_, gate := s.service()
		return gate
	}, func(string) []*MCPServers { return s.mcpServers() }), TrustCommand(s.opts.Home))
}

// FrontCommands are /grants and /mcp over a gate and the MCP servers a
// session sees (none: MCP is not available): kin serve's and kin acp's.
// Each answers with a summary for a person and, as its Data, what
// grants/list and mcp/list answer.
func FrontCommands(gate func() *permission.Gate, servers func(sessionID string) []*MCPServers) []agent.FrontCommand {
	return []agent.FrontCommand{
		{Command: agent.Command{Name: "grants"}, Run: func(ctx context.Context, sessionID, _ string) (agent.CommandResult, error) {
			out := grantsList(gate(), servers(sessionID))
			return agent.CommandResult{Text: grantsText(out), Data: out}, nil
		}},
		{Command: agent.Command{Name: "mcp"}, Run: func(ctx context.Context, sessionID, _ string) (agent.CommandResult, error) {
			ms := servers(sessionID)
			if len(ms) == 0 {
				return agent.CommandResult{Text: "MCP support is not available in this kin."}, nil
			}
			list := mcpList(ms[0].m.List())
			for _, m := range ms[1:] {
				more := mcpList(m.m.List())
				list.Servers = append(list.Servers, more.Servers...)
				list.Warnings = append(list.Warnings, more.Warnings...)
				list.Notices = append(list.Notices, more.Notices...)
			}
			return agent.CommandResult{Text: mcpText(list), Data: list}, nil
		}},
	}
}

func grantsText(r GrantsListResult) string {
	if len(r.Grants) == 0 {
		return "No standing grants."
	}
	var b strings.Builder
	b.WriteString("Standing grants:")
	for _, g := range r.Grants {
		fmt.Fprintf(&b, "\n  %s  %s (%s)", g.ID, g.Label, g.Scope)
	}
	return b.String()
}

// mcpText summarises mcp/list's servers: name, state and tools.
func mcpText(l MCPListResult) string {
	if len(l.Servers) == 0 {
		return "No MCP servers are configured."
	}
	var b strings.Builder
	b.WriteString("MCP servers:")
	for _, sv := range l.Servers {
		state := sv.State
		if !sv.Enabled {
			state = "disabled"
		}
		fmt.Fprintf(&b, "\n  %s  %s  %d tools", sv.Name, state, sv.Tools)
	}
	return b.String()
}
