package agent

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// repairSubagents adjusts what closes a session a stopped kin left open
// (repairs: see session.View.Repairs) for its delegate calls. A delegate
// call left without a result had started its subagent when a session of
// its names the call: that session's open turn is closed too (failed, as
// any turn a stopped kin left), and the call ends unknown when the
// subagent could change things (it may have), failed when it was in ask
// mode (it only read).
//
// With follow (this kin goes on polling MCP tasks a stopped kin left, see
// closeTasks), a subagent whose calls were left running as tasks is not
// closed that way: its delegate call is taken out of repairs and returned
// in waiting, to stay open while this kin follows the subagent's tasks
// (followChild), since the delegate call is what waits on them.
func (s *Service) repairSubagents(parentID string, repairs []session.Record, follow bool) (_ []session.Record, waiting []childTasks) {
	var open []int
	for i, r := range repairs {
		if r.Type == session.TypeResult && r.Name == DelegateToolName {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return repairs, nil
	}
	children, err := s.store.Children(parentID)
	if err != nil {
		s.log.Warn("listing a session's subagents to close them", zap.String("session", parentID), zap.Error(err))
		return repairs, nil
	}
	drop := map[int]bool{}
	for _, i := range open {
		r := &repairs[i]
		if _, busy := s.following.Load(followKey(parentID, r.CallID)); follow && busy {
			// This kin already follows its subagent's tasks (the session
			// was opened again meanwhile): the call stays open.
			waiting = append(waiting, childTasks{call: *r})
			drop[i] = true
			continue
		}
		for _, ch := range children {
			c, ok := s.repairChild(ch.SessionID, r.TurnID, r.CallID, follow)
			if !ok {
				continue
			}
			r.Subagent = &session.SubagentRef{SessionID: ch.SessionID, Mode: c.mode}
			if c.log != nil {
				c.call = *r
				waiting = append(waiting, c)
				drop[i] = true
			} else if c.mode == string(permission.ModeAsk) {
				r.Status = string(tool.StatusFailed)
				r.Output = fmt.Sprintf("kin stopped while this subagent (session %s) ran in ask mode: it only read, and gave no answer", ch.SessionID)
			} else {
				r.Status = string(tool.StatusUnknown)
				r.Output = fmt.Sprintf("kin stopped while this subagent (session %s) ran in %s mode: it may have changed files or run commands", ch.SessionID, c.mode)
			}
			break
		}
	}
	out := repairs[:0:0]
	for i, r := range repairs {
		if !drop[i] {
			out = append(out, r)
		}
	}
	return out, waiting
}

// childTasks is a subagent a stopped kin left with calls running as MCP
// tasks, whose delegate call waits for them (without log: this kin
// already follows them).
type childTasks struct {
	call  session.Record // the delegate call's result as a repair would write it
	child string
	mode  string
	// log is the subagent's, held (owned) until its tasks end, so that
	// nothing else closes those calls meanwhile.
	log   *session.Log
	tasks []session.OpenTask
	// unknown are the subagent's other calls the repair ended unknown.
	unknown []string
}

// repairChild closes what a stopped kin left open in the session of the
// subagent of call callID of turn turnID (when no kin has it open); ok
// says the session is that subagent's. With follow, calls it left running
// as tasks stay open: they are returned with the log, kept open.
func (s *Service) repairChild(id, turnID, callID string, follow bool) (childTasks, bool) {
	var c childTasks
	log, err := s.store.Open(id)
	if err != nil {
		return c, false
	}
	keep := false
	defer func() {
		if !keep {
			log.Close()
		}
	}()
	v, err := s.store.View(id, session.Query{})
	// Another call's subagent is left as it is: its own call closes it
	// (a subagent's turn ends on record before its delegate call's result,
	// so one whose call has a result has nothing open).
	if err != nil || v.Parent() == nil || v.Parent().CallID != callID || v.Parent().TurnID != turnID {
		return c, false
	}
	c = childTasks{child: id, mode: v.Info.Mode}
	if c.mode == "" {
		c.mode = string(permission.ModeAgent)
	}
	// Calls that had ended unknown before kin stopped count as the
	// repaired ones do: the delegate call then ends unknown (followChild).
	for _, u := range v.Unknown() {
		c.unknown = append(c.unknown, u.Name)
	}
	repairs := v.Repairs()
	if follow && log.ReadOnly() == nil {
		repairs, c.tasks = v.RepairsFollowing()
	}
	for _, r := range repairs {
		r.Time = time.Now().UTC()
		if _, _, err := log.Append(r); err != nil {
			s.log.Warn("closing a subagent's session kin left open", zap.String("session", id), zap.Error(err))
			return childTasks{child: id, mode: c.mode}, true
		}
		if r.Type == session.TypeResult && r.Status == string(tool.StatusUnknown) {
			c.unknown = append(c.unknown, r.Name)
		}
	}
	if err := log.Sync(); err != nil {
		s.log.Warn("closing a subagent's session kin left open", zap.String("session", id), zap.Error(err))
	}
	if len(c.tasks) > 0 {
		keep, c.log = true, log
	}
	return c, true
}

// deleteSubagents deletes the sessions of a deleted session's subagents
// (and theirs): nothing lists them any more. One that cannot go (another
// kin has it open) stays, and is logged.
func (s *Service) deleteSubagents(parentID string) {
	children, err := s.store.Children(parentID)
	if err != nil {
		s.log.Warn("listing a deleted session's subagents", zap.String("session", parentID), zap.Error(err))
		return
	}
	for _, ch := range children {
		if err := s.DeleteSession(ch.SessionID); err != nil {
			s.log.Warn("deleting a subagent's session", zap.String("session", ch.SessionID), zap.Error(err))
		}
	}
}
