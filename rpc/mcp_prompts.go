package rpc

import (
	"context"

	"github.com/kin-dev/kin/agent"
)

// The MCP servers' prompts as kin's commands (PROTOCOL.md "Commands"): the
// manager lists and fetches them, the agent offers and runs them, and a
// change of any server's prompts reaches the front end (kin serve sends
// commands/changed).

// PromptsFront is an MCPFront that hears when the servers' prompts change.
type PromptsFront interface {
	PromptsChanged()
}

// mcpPrompts offers m's prompts to the agent; nil without MCP.
func mcpPrompts(m *MCPServers) agent.Prompts {
	if m == nil {
		return nil
	}
	return m
}

// Prompts implements agent.Prompts: every connected server's prompts.
func (m *MCPServers) Prompts() []agent.Prompt {
	ps := m.m.Prompts()
	out := make([]agent.Prompt, 0, len(ps))
	for _, x := range ps {
		ap := agent.Prompt{Server: x.Server, Name: x.Name, Title: x.Title, Description: x.Description}
		for _, a := range x.Arguments {
			ap.Arguments = append(ap.Arguments, agent.CommandArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, ap)
	}
	return out
}

// GetPrompt implements agent.Prompts.
func (m *MCPServers) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	return m.m.GetPrompt(ctx, server, name, args)
}

// PromptsChanged implements manager.PromptsHost.
func (h mcpHost) PromptsChanged() {
	if f, ok := h.front.(PromptsFront); ok {
		f.PromptsChanged()
	}
}

// PromptsChanged implements PromptsFront: commands/changed.
func (f serveFront) PromptsChanged() {
	f.s.notify(NotifyCommandsChanged, CommandsChanged{})
}
