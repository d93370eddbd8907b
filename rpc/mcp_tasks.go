package rpc

import (
	"context"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/tool"
)

// mcpTasks is what goes on polling the MCP tasks a stopped kin left
// running, when a session is resumed (nil without MCP: such calls end
// unknown).
func mcpTasks(m *MCPServers) agent.TaskFollower {
	if m == nil {
		return nil
	}
	return m
}

// FollowTask implements agent.TaskFollower on the configured servers.
func (m *MCPServers) FollowTask(ctx context.Context, tk tool.Task, name string, env tool.Env, working func(string)) tool.Result {
	return m.m.FollowTask(ctx, tk, name, env, working)
}
