package rpc

import (
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
)

// events turns agent events into notifications.
type events struct{ s *Server }

func (e events) TurnStarted(v agent.TurnStarted) {
	e.s.log.Info("turn started", zap.String("session", v.SessionID), zap.String("turn", v.TurnID))
	e.s.notify(NotifyTurnStarted, v)
}
func (e events) Delta(v agent.Delta)       { e.s.notify(NotifyTurnDelta, v) }
func (e events) ToolCall(v agent.ToolCall) { e.s.notify(NotifyTurnToolCall, v) }
func (e events) TurnDone(v agent.TurnDone) {
	e.s.log.Info("turn ended", zap.String("session", v.SessionID), zap.String("turn", v.TurnID), zap.String("status", v.Status),
		zap.Int64("inputTokens", v.Usage.InputTokens), zap.Int64("outputTokens", v.Usage.OutputTokens), zap.String("error", v.Error))
	e.s.notify(NotifyTurnCompleted, v)
}
func (e events) Notice(v agent.Notice) { e.s.notify(NotifyNotice, v) }
func (e events) Plan(v agent.PlanUpdate) {
	e.s.notify(NotifyTurnPlan, TurnPlan{SessionID: v.SessionID, TurnID: v.TurnID, Entries: planEntries(v.Entries)})
}
func (e events) ApprovalRequested(v permission.Request) {
	e.s.log.Info("approval requested", zap.String("request", v.RequestID), zap.String("kind", v.Kind), zap.String("tool", v.ToolName))
	e.s.notify(NotifyApprovalRequest, v)
}
func (e events) ApprovalResolved(v permission.Resolution) {
	e.s.log.Info("approval resolved", zap.String("request", v.RequestID), zap.String("decision", v.Decision), zap.String("reason", v.Reason))
	e.s.notify(NotifyApprovalResolved, v)
}
