package chat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// A subagent (the delegate tool's child session) works in a session of its
// own; its notifications name the session and the delegate call it works
// for (parentSessionId, parentCallId). kin chat shows them under that call,
// indented, one level per subagent: its answer as it streams, a line per
// call it made, and how it ended when it did not complete. Its approvals
// are asked like any other, saying whose they are.

// subIndent is one level of a subagent's output.
const subIndent = "  │ "

// subagent is a subagent session kin chat has seen under the current one.
type subagent struct {
	root  string // the person's session it works for, however deep
	depth int
}

// subagentNote shows a notification of a subagent of the current session,
// and reports whether n was a subagent's (shown or not: one of another
// session is not this screen's).
func (u *ui) subagentNote(n note) bool {
	switch n.method {
	case rpc.NotifyTurnStarted, rpc.NotifyTurnDelta, rpc.NotifyTurnReasoning, rpc.NotifyTurnToolCall,
		rpc.NotifyTurnUsage, rpc.NotifyTurnCompleted, rpc.NotifyNotice:
	default:
		return false
	}
	var head struct {
		SessionID string `json:"sessionId"`
		rpc.Nesting
	}
	if json.Unmarshal(n.params, &head) != nil || head.ParentSessionID == "" {
		return false
	}
	depth := u.subagentDepth(head.SessionID, head.ParentSessionID)
	if depth == 0 {
		return true
	}
	ind := strings.Repeat(subIndent, depth)
	s := u.scr
	switch n.method {
	case rpc.NotifyTurnDelta:
		var d turnDelta
		if json.Unmarshal(n.params, &d) == nil {
			s.stream("sub:"+d.TurnID, s.dim(ind), s.dim(ind), clean(d.Text))
		}
	case rpc.NotifyTurnToolCall:
		var c toolCall
		if json.Unmarshal(n.params, &c) == nil {
			u.subagentCall(c, ind)
		}
	case rpc.NotifyTurnCompleted:
		var c turnCompleted
		if json.Unmarshal(n.params, &c) == nil && c.Status != "completed" {
			why := ""
			if c.Error != "" {
				why = ": " + cleanLine(c.Error)
			}
			s.line(s.dim(ind) + s.yellow("[subagent "+cleanLine(c.Status)+"]") + why)
		}
	case rpc.NotifyNotice:
		var nt notice
		if json.Unmarshal(n.params, &nt) == nil {
			s.line(s.dim(ind) + s.yellow("["+first(nt.Level, "info")+"]") + " " + cleanLine(nt.Message))
		}
	}
	return true
}

// subagentDepth is how deep session is nested under the current session,
// given its parent (0: it is not a subagent of it).
func (u *ui) subagentDepth(session, parent string) int {
	if u.session == "" {
		return 0
	}
	if u.subs == nil {
		u.subs = map[string]subagent{}
	}
	depth := 0
	switch p, known := u.subs[parent]; {
	case parent == u.session:
		depth = 1
	case known && p.root == u.session:
		depth = p.depth + 1
	default:
		return 0
	}
	u.subs[session] = subagent{root: u.session, depth: depth}
	return depth
}

// subagentCall is a line per call a subagent made, once it ended (its
// command output is the subagent's to read, not streamed here).
func (u *ui) subagentCall(c toolCall, ind string) {
	switch c.Status {
	case "", "pending", "awaiting_approval", "running":
		return
	}
	s := u.scr
	s.line(fmt.Sprintf("%s%s %s: %s … %s", s.dim(ind), s.cyan("[tool]"), cleanLine(c.Name), cleanLine(first(c.Title, c.Name)), s.status(c.Status)))
	if c.Status != "completed" && c.Status != "output_limit" {
		if out := strings.TrimSpace(clean(c.Output)); out != "" {
			s.line(s.dim(ind) + "    " + cleanLine(strings.SplitN(out, "\n", 2)[0]))
		}
	}
}

// delegateWaiting says once that a delegate call waits for a free slot.
func (u *ui) delegateWaiting(c toolCall, st *callState) {
	if c.Subagent == nil || !c.Subagent.Waiting || st.last == "waiting" {
		return
	}
	st.last = "waiting"
	u.scr.line(fmt.Sprintf("%s %s: %s … %s", u.scr.cyan("[tool]"), cleanLine(c.Name), cleanLine(first(c.Title, c.Name)),
		u.scr.dim("waiting: as many subagents run as subagents.maxRunning allows")))
}

// subagentOrigin is the line an approval of a subagent starts with.
func subagentOrigin(s *screen, r approvalRequest) {
	if r.ParentSessionID != "" {
		s.line(s.dim(fmt.Sprintf("(asked by a subagent, session %s, for call %s)", cleanLine(r.SessionID), cleanLine(r.ParentCallID))))
	}
}

// sessionTree orders session/list's rows (subagents' included) so that
// each subagent's session comes right after its parent's, with its depth.
func sessionTree(rows []rpc.SessionInfo) ([]rpc.SessionInfo, []int) {
	children := map[string][]rpc.SessionInfo{}
	known := map[string]bool{}
	for _, r := range rows {
		known[r.SessionID] = true
	}
	var top []rpc.SessionInfo
	for _, r := range rows {
		if r.ParentID != "" && known[r.ParentID] {
			children[r.ParentID] = append(children[r.ParentID], r)
		} else {
			top = append(top, r)
		}
	}
	var out []rpc.SessionInfo
	var depths []int
	var add func(r rpc.SessionInfo, depth int)
	add = func(r rpc.SessionInfo, depth int) {
		out, depths = append(out, r), append(depths, depth)
		for _, c := range children[r.SessionID] {
			add(c, depth+1)
		}
	}
	for _, r := range top {
		add(r, 0)
	}
	return out, depths
}
