package agent

import (
	"context"
	"fmt"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// OwnToolNames are the tools kin itself offers in every session, beside the
// front end's: no MCP tool may take their names.
var OwnToolNames = []string{PlanToolName, AskToolName}

// tools is what the model may call in this turn: kin's own tools, then the
// front end's (built-in and MCP), asked again before each request since
// MCP servers come and go.
func (t *turn) tools() []tool.Tool {
	own := []tool.Tool{planTool{t}, askTool{t}}
	return append(own, t.svc.tools(t.sess.id)...)
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
