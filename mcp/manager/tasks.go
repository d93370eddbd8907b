package manager

import (
	"context"
	"fmt"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/connect"
)

// FollowTask goes on polling an MCP task a stopped kin left running (see
// agent.TaskFollower, calltool.Resume): it waits for the configured
// servers that connect on their own to settle (within their connect
// timeout; a server waiting for a launch approval or a sign-in is not
// waited for), then follows the task on the server named server. The call
// is never sent again. exposed is the tool's name as the model called it.
func (m *Manager) FollowTask(ctx context.Context, server, taskID, exposed string, env tool.Env, working func(string)) tool.Result {
	wctx, done := context.WithTimeout(ctx, connect.ConnectTimeout)
	m.AwaitArrived(wctx)
	done()
	m.mu.Lock()
	s := m.servers[server]
	m.mu.Unlock()
	if s == nil {
		return calltool.Unknown(server, exposed, fmt.Sprintf("it ran as task %s, and after a restart kin has no MCP server named %s to look at it", visible.Cut(catalog.Strip(taskID), 100), catalog.Label(server)))
	}
	// A server that waits for the person (a launch approval, a sign-in)
	// or reconnects is given a while longer; then the call is unknown.
	for end := time.Now().Add(TaskServerWait); time.Now().Before(end) && ctx.Err() == nil; {
		if _, ok := s.Session(); ok {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	name := exposed
	s.mu.Lock()
	for _, t := range s.tools {
		if t.Spec().Name == exposed {
			name = t.Def().Name
		}
	}
	s.mu.Unlock()
	if working != nil {
		ctx = tool.WithWorking(ctx, working)
	}
	return calltool.Resume(ctx, env, s, name, taskID, nil)
}

// TaskServerWait is how long a resumed task waits for its server to be
// connected (after the servers that connect on their own have settled).
const TaskServerWait = 2 * time.Minute
