package rpc

import (
	"context"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/mcp/manager"
)

// The MCP servers' prompts as kin's commands (PROTOCOL.md "Commands"): the
// manager lists and fetches them, the agent offers and runs them, and a
// change of any server's prompts is commands/changed.

// mcpPrompts offers m's prompts to the agent; nil without MCP.
func mcpPrompts(m *mcpService) agent.Prompts {
	if m == nil {
		return nil
	}
	return promptSource{m.m}
}

type promptSource struct{ m *manager.Manager }

func (p promptSource) Prompts() []agent.Prompt {
	ps := p.m.Prompts()
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

func (p promptSource) GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error) {
	return p.m.GetPrompt(ctx, server, name, args)
}

// PromptsChanged implements manager.PromptsHost.
func (h mcpHost) PromptsChanged() {
	h.s.notify(NotifyCommandsChanged, CommandsChanged{})
}
