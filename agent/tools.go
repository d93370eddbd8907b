package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/review"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/toolsearch"
)

// OwnToolNames are the tools kin itself offers in every session, beside the
// front end's: no MCP tool may take their names.
var OwnToolNames = []string{PlanToolName, AskToolName, DelegateToolName, SkillToolName, toolsearch.Name, review.ToolName}

// tools is what the model may call in this turn: kin's own tools, then the
// front end's (built-in and MCP), asked again before each request since
// MCP servers come and go. A subagent plans for nobody and asks the person
// nothing: it gets neither update_plan nor ask, and delegate only above
// subagents.maxDepth.
func (t *turn) tools() []tool.Tool {
	var own []tool.Tool
	if t.parent == nil {
		own = append(own, planTool{t}, askTool{t})
	}
	own = append(own, skillTool{t})
	own = append(own, t.specTools()...)
	if t.mayDelegate() {
		own = append(own, delegateTool{t})
	}
	return append(own, t.svc.tools(t.sess.frontID())...)
}

// mayContinue asks the person, when the turn has made its budget of tool
// calls, whether it may make as many again. The decision is recorded; a
// turn without a gate (or whose question is not answered) stops.
func (t *turn) mayContinue(ctx context.Context) bool {
	gate := t.svc.opts.Gate
	if gate == nil {
		return false
	}
	limit := t.svc.maxCalls
	req := permission.ContinueRequest(t.sess.id, t.id, limit)
	req.Parent = t.sess.parentRef()
	out := gate.Ask(ctx, req)
	t.record(session.Record{Type: session.TypeDecision, RequestID: out.RequestID, ApprovalKind: req.Kind,
		Decision: out.Decision, Reason: out.Reason, Title: req.Title})
	if !out.Allowed() {
		return false
	}
	t.budget += limit
	return true
}

// limitError says why a turn ended at its call limit.
func limitError(calls int) error {
	return fmt.Errorf("the turn stopped after %d tool calls, as the person chose; ask again to go on", calls)
}

// awaitArriving waits, before the turn's first model request, for tools
// still on their way (MCP servers connecting, see tool.Arriving), at most
// as long as they may take, with a notice naming them: a question asked
// right after the editor opened finds their tools instead of "there is no
// tool named …". Servers that failed, or wait for an approval or a
// sign-in, are never waited for.
func (t *turn) awaitArriving(ctx context.Context) {
	a, ok := t.svc.opts.Tools.(tool.Arriving)
	if !ok {
		return
	}
	names, within := a.Arriving()
	if len(names) == 0 || within <= 0 {
		return
	}
	which := "MCP server " + names[0]
	if len(names) > 1 {
		which = "MCP servers " + strings.Join(names, ", ")
	}
	t.events().Notice(Notice{Level: "info", Source: "mcp", SessionID: t.sess.id,
		Message: fmt.Sprintf("Waiting up to %s for %s to connect before asking the model", max(within.Round(time.Second), time.Second), which)})
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	a.AwaitArrived(ctx)
}
