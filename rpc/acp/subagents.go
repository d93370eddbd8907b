package acp

import (
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent"
)

// A subagent (the delegate tool's child session) is no ACP session: the
// client knows only the session it prompted. Its progress is shown as the
// content of that session's delegate call (tool_call_update, the way a
// command's output streams: its answer as it streams, a line per call it
// made), and its approvals are asked in that session, each on a card of
// its own (see permissionToolCallID).

// frontOf is the session of this connection, and the delegate call in it,
// that a subagent's work shows under: the nearest ancestor the client
// knows (a subagent's own subagent shows under the first delegate call).
func (s *Server) frontOf(p agent.Parent) (sessionID, callID string, ok bool) {
	svc, _ := s.service()
	for depth := 0; p.SessionID != "" && depth < 8; depth++ {
		s.mu.Lock()
		known := s.sessions[p.SessionID] != nil
		s.mu.Unlock()
		if known {
			return p.SessionID, p.CallID, true
		}
		if svc == nil {
			break
		}
		p = svc.ParentOf(p.SessionID)
	}
	return "", "", false
}

// nested adds text to the content of the delegate call a subagent works
// for; it reports whether v was a subagent's (and so handled).
func (e events) nested(p agent.Parent, text string) bool {
	if p.SessionID == "" {
		return false
	}
	sid, callID, ok := e.s.frontOf(p)
	if !ok || text == "" {
		return true
	}
	if ss := e.session(sid); ss != nil {
		ss.stream(e.s, callID).add(text)
	}
	return true
}

// subagentLine is how a subagent's call shows in its delegate call's
// content once it ended (or while it waits for the person).
func subagentLine(c agent.ToolCall) string {
	if c.Status != agent.CallAwaitingApproval && !final(c.Status) {
		return ""
	}
	args, _ := rawInput(c.Arguments).(map[string]any)
	return fmt.Sprintf("\n• %s: %s\n", oneLine(titleOf(c, args)), strings.ReplaceAll(c.Status, "_", " "))
}

// subagentMeta is what kin's _meta says of a delegate call's subagent.
func subagentMeta(s *agent.Subagent) map[string]any {
	m := map[string]any{"mode": string(s.Mode)}
	if s.SessionID != "" {
		m["sessionId"] = s.SessionID
	}
	if s.Model != "" {
		m["model"] = s.Model
	}
	if s.Waiting {
		m["waiting"] = true
	}
	return m
}
