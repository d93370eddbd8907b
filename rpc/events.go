package rpc

import (
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/manager"
)

// events turns agent events into notifications.
type events struct{ s *Server }

func (e events) TurnStarted(v agent.TurnStarted) {
	e.s.awaitReply(v.SessionID, NotifyTurnStarted) // the turnId reaches the editor first
	e.s.log.Info("turn started", zap.String("session", v.SessionID), zap.String("turn", v.TurnID))
	e.s.notify(NotifyTurnStarted, TurnStarted{SessionID: v.SessionID, TurnID: v.TurnID, Input: v.Input, Parts: inputParts(v.Parts), Nesting: nesting(v.Parent)})
}

func (e events) Reasoning(v agent.ReasoningDelta) {
	e.s.notify(NotifyTurnReasoning, TurnReasoning{SessionID: v.SessionID, TurnID: v.TurnID, Text: v.Text, Nesting: nesting(v.Parent)})
}

func (e events) Usage(v agent.UsageUpdate) {
	e.s.notify(NotifyTurnUsage, TurnUsage{SessionID: v.SessionID, TurnID: v.TurnID, Usage: usage(v.Usage), Nesting: nesting(v.Parent)})
}

func (e events) Delta(v agent.Delta) {
	e.s.notify(NotifyTurnDelta, TurnDelta{SessionID: v.SessionID, TurnID: v.TurnID, Text: v.Text, Refusal: v.Refusal, Nesting: nesting(v.Parent)})
}

func (e events) ToolCall(v agent.ToolCall) {
	e.s.awaitReply(v.SessionID, NotifyTurnToolCall) // a session/resume is answered first
	e.s.notify(NotifyTurnToolCall, TurnToolCall{SessionID: v.SessionID, TurnID: v.TurnID, CallID: v.CallID, Name: v.Name,
		Kind: string(v.Kind), Title: v.Title, Arguments: v.Arguments, Status: v.Status, StatusMessage: v.StatusMessage, OutputDelta: v.OutputDelta,
		Output: v.Output, Content: toolContent(v.Content), ModelSaw: modelSaw(v.Saw), Links: resourceLinks(v.Links), Sandbox: sandboxUse(v.Sandbox), Reason: v.Reason, Subagent: subagentInfo(v.Subagent), Nesting: nesting(v.Parent)})
}

func (e events) TurnDone(v agent.TurnDone) {
	e.s.awaitReply(v.SessionID, NotifyTurnCompleted) // turn/cancel is answered first
	e.s.log.Info("turn ended", zap.String("session", v.SessionID), zap.String("turn", v.TurnID), zap.String("status", v.Status),
		zap.Int64("inputTokens", v.Usage.InputTokens), zap.Int64("outputTokens", v.Usage.OutputTokens), zap.String("error", v.Error))
	e.s.notify(NotifyTurnCompleted, TurnCompleted{SessionID: v.SessionID, TurnID: v.TurnID, Status: v.Status, Error: v.Error,
		Usage: usage(v.Usage), Nesting: nesting(v.Parent)})
}

func (e events) Notice(v agent.Notice) {
	e.s.notify(NotifyNotice, Notice{Level: v.Level, Message: v.Message, Source: v.Source, SessionID: v.SessionID, Nesting: nesting(v.Parent)})
}

func (e events) Plan(v agent.PlanUpdate) {
	e.s.notify(NotifyTurnPlan, TurnPlan{SessionID: v.SessionID, TurnID: v.TurnID, Entries: planEntries(v.Entries)})
}

func usage(u agent.Usage) Usage {
	out := Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ContextTokens: u.ContextTokens, ContextWindow: u.ContextWindow,
		CachedInputTokens: u.CachedInputTokens, SessionTokens: u.SessionTokens, Estimated: u.Estimated, Unpriced: u.Unpriced}
	if u.Currency != "" {
		out.Currency, out.Cost, out.SessionCost = u.Currency, &u.Cost, &u.SessionCost
	}
	return out
}

func toolContent(cs []tool.Content) []ToolContent {
	var out []ToolContent
	for _, c := range cs {
		tc := ToolContent{Type: c.Type, Text: c.Text}
		if c.Diff != nil {
			d := diff(*c.Diff)
			tc.Diff = &d
		}
		out = append(out, tc)
	}
	return out
}

func diff(d tool.Diff) Diff {
	return Diff{Path: d.Path, OldText: d.OldText, NewText: d.NewText, Unified: d.Unified}
}

// asker turns the broker's questions into approval/request and
// elicitation/request, and their ends into */resolved.
type asker struct{ s *Server }

func (a asker) Asked(q ask.Question) {
	switch b := q.Body.(type) {
	case permission.Request:
		a.s.log.Info("approval requested", zap.String("request", q.ID), zap.String("kind", b.Kind), zap.String("tool", b.ToolName))
		a.s.notify(NotifyApprovalRequest, approvalRequest(q, b))
	case manager.ElicitRequest:
		a.s.log.Info("elicitation requested", zap.String("request", q.ID), zap.String("server", b.Server), zap.String("mode", b.Mode))
		r := elicitationRequest(q.ID, b)
		r.Nesting = a.nesting(q)
		a.s.notify(NotifyElicitationRequest, r)
	case agent.Question:
		a.s.log.Info("kin asks the person", zap.String("request", q.ID), zap.String("session", b.SessionID), zap.Int("questions", len(b.Items)))
		a.s.notify(NotifyElicitationRequest, kinElicitation(q.ID, b))
	}
}

// nesting is what a question of a subagent's session says of its parent.
func (a asker) nesting(q ask.Question) Nesting {
	svc, _ := a.s.service()
	return questionNesting(svc, q)
}

func (a asker) Resolved(q ask.Question, ans ask.Answer) {
	switch q.Kind {
	case ask.KindApproval:
		a.s.log.Info("approval resolved", zap.String("request", q.ID), zap.String("decision", ans.Choice), zap.String("reason", ans.Reason))
		a.s.notify(NotifyApprovalResolved, ApprovalResolved{RequestID: q.ID, SessionID: q.SessionID, Decision: ans.Choice, Reason: ans.Reason,
			Nesting: a.nesting(q)})
	case ask.KindElicitation:
		a.s.log.Info("elicitation resolved", zap.String("request", q.ID), zap.String("action", ans.Choice), zap.String("reason", ans.Reason))
		a.s.notify(NotifyElicitationResolved, ElicitationResolved{RequestID: q.ID, SessionID: q.SessionID, Action: ans.Choice, Reason: ans.Reason,
			Nesting: a.nesting(q)})
	}
}

// pending lists what still waits for the person in a session, as the
// requests that asked it.
func pending(s *Server, sessionID string) []PendingRequest {
	out := []PendingRequest{}
	for _, q := range s.asks.Pending(sessionID) {
		switch body := q.Body.(type) {
		case permission.Request:
			r := approvalRequest(q, body)
			out = append(out, PendingRequest{Approval: &r})
		case manager.ElicitRequest:
			r := elicitationRequest(q.ID, body)
			svc, _ := s.service()
			r.Nesting = questionNesting(svc, q)
			out = append(out, PendingRequest{Elicitation: &r})
		case agent.Question:
			r := kinElicitation(q.ID, body)
			out = append(out, PendingRequest{Elicitation: &r})
		}
	}
	return out
}
