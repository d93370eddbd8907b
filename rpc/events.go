package rpc

import (
	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
)

// events turns agent events into notifications.
type events struct{ s *Server }

func (e events) TurnStarted(v agent.TurnStarted) { e.s.notify(NotifyTurnStarted, v) }
func (e events) Delta(v agent.Delta)             { e.s.notify(NotifyTurnDelta, v) }
func (e events) ToolCall(v agent.ToolCall)       { e.s.notify(NotifyTurnToolCall, v) }
func (e events) TurnDone(v agent.TurnDone)       { e.s.notify(NotifyTurnCompleted, v) }
func (e events) Notice(v agent.Notice)           { e.s.notify(NotifyNotice, v) }
func (e events) ApprovalRequested(v permission.Request) {
	e.s.notify(NotifyApprovalRequest, v)
}
func (e events) ApprovalResolved(v permission.Resolution) {
	e.s.notify(NotifyApprovalResolved, v)
}
