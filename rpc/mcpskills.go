package rpc

import (
	"context"
	"fmt"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/mcp/manager"
)

// mcpSkills is the agent's view of the MCP servers' skills (the Skills
// extension): listings, current entries and verified reads, through the
// manager.
type mcpSkills struct{ servers *MCPServers }

func toAgentSkill(sk manager.Skill) agent.MCPSkill {
	return agent.MCPSkill{Server: sk.Server, Launch: sk.Launch, URI: sk.URI, Name: sk.Name, Description: sk.Description,
		AllowedTools: sk.AllowedTools, Digest: sk.Digest, Files: sk.Rel()}
}

func (m mcpSkills) Skills() []agent.MCPSkill {
	var out []agent.MCPSkill
	for _, sk := range m.servers.m.Skills() {
		out = append(out, toAgentSkill(sk))
	}
	return out
}

func (m mcpSkills) Get(ctx context.Context, s agent.MCPSkill) (agent.MCPSkill, error) {
	sk, err := m.servers.m.GetSkill(ctx, s.Server, s.URI)
	if err != nil {
		return agent.MCPSkill{}, err
	}
	return toAgentSkill(sk), nil
}

// held is the manager's entry of s with the manifest s names.
func (m mcpSkills) held(s agent.MCPSkill) (manager.Skill, error) {
	for _, sk := range m.servers.m.Skills() {
		if sk.Server == s.Server && sk.URI == s.URI {
			if sk.Digest != s.Digest {
				return manager.Skill{}, fmt.Errorf("%w: %s changed on the server since it was loaded; load it again (kin asks you again)", manager.ErrSkill, s.URI)
			}
			return sk, nil
		}
	}
	return manager.Skill{}, fmt.Errorf("%w: %s is no longer served by %s", manager.ErrSkill, s.URI, s.Server)
}

func (m mcpSkills) Load(ctx context.Context, s agent.MCPSkill) (string, error) {
	sk, err := m.held(s)
	if err != nil {
		return "", err
	}
	return m.servers.m.ReadSkill(ctx, sk, "")
}

func (m mcpSkills) ReadFile(ctx context.Context, s agent.MCPSkill, file string) (string, error) {
	sk, err := m.held(s)
	if err != nil {
		return "", err
	}
	return m.servers.m.ReadSkill(ctx, sk, file)
}

// MCPSkillsOf is the agent's view of these servers' skills (kin acp's).
func MCPSkillsOf(m *MCPServers) agent.MCPSkills { return mcpSkills{m} }
