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
// waited for), then follows the task on the server tk names, when that
// name still launches what the call ran on (tk.Launch). The call is never
// sent again. exposed is the tool's name as the model called it.
func (m *Manager) FollowTask(ctx context.Context, tk tool.Task, exposed string, env tool.Env, working func(string)) tool.Result {
	server, taskID := tk.Server, tk.ID
	wctx, done := context.WithTimeout(ctx, connect.ConnectTimeout)
	m.AwaitArrived(wctx)
	done()
	m.mu.Lock()
	s := m.servers[server]
	m.mu.Unlock()
	if s == nil {
		return calltool.Unknown(server, exposed, fmt.Sprintf("it ran as task %s, and after a restart kin has no MCP server named %s to look at it", visible.Cut(catalog.Strip(taskID), 100), catalog.Label(server)))
	}
	// A task id means something only to the server that made it. The name
	// may launch another server by now (the person pointed it elsewhere, a
	// project's entry of the same name shadows theirs, the project's
	// server file changed): that one is not asked, and its answer never
	// becomes this call's result. A record without a launch (an older
	// kin's) cannot be matched, and is not followed either.
	other := func() tool.Result {
		return calltool.Unknown(server, exposed, fmt.Sprintf("it ran as task %s, and after a restart the MCP server named %s launches another server than the call ran on (its entry, its program or the project changed), which kin does not ask about that task",
			visible.Cut(catalog.Strip(taskID), 100), catalog.Label(server)))
	}
	if tk.Launch == "" || m.launchOf(s.cfg).Key() != tk.Launch {
		return other()
	}
	// A server that waits for the person (a launch approval, a sign-in)
	// or reconnects is given a while longer; then the call is unknown.
	for end := time.Now().Add(TaskServerWait); time.Now().Before(end) && ctx.Err() == nil; {
		if _, ok := s.Session(); ok {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	// What was approved and connected is what is asked (its files may
	// have changed since the look above).
	if _, ok := s.Session(); ok && s.Launch() != tk.Launch {
		return other()
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
