package rpc

import (
	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
)

// nesting is what a subagent's notification says of the session, turn
// and call it works for.
func nesting(p agent.Parent) Nesting {
	return Nesting{ParentSessionID: p.SessionID, ParentTurnID: p.TurnID, ParentCallID: p.CallID}
}

func subagentInfo(s *agent.Subagent) *SubagentInfo {
	if s == nil {
		return nil
	}
	return &SubagentInfo{SessionID: s.SessionID, Mode: string(s.Mode), Model: s.Model, Waiting: s.Waiting}
}

func subagentRef(r *session.SubagentRef) *SubagentInfo {
	if r == nil {
		return nil
	}
	return &SubagentInfo{SessionID: r.SessionID, Mode: r.Mode}
}

// questionNesting is, for a question a subagent's session asks, the
// session, turn and call it works for: an approval says it itself; an MCP
// server's question is a call's of a session this kin has open.
func questionNesting(svc *agent.Service, q ask.Question) Nesting {
	if r, ok := q.Body.(permission.Request); ok {
		return nesting(r.Parent)
	}
	if svc == nil || q.SessionID == "" {
		return Nesting{}
	}
	return nesting(svc.ParentOf(q.SessionID))
}
