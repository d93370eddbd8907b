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
func (s *Service) repairSubagents(parentID string, repairs []session.Record) []session.Record {
	var open []int
	for i, r := range repairs {
		if r.Type == session.TypeResult && r.Name == DelegateToolName {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return repairs
	}
	children, err := s.store.Children(parentID)
	if err != nil {
		s.log.Warn("listing a session's subagents to close them", zap.String("session", parentID), zap.Error(err))
		return repairs
	}
	for _, i := range open {
		r := &repairs[i]
		for _, ch := range children {
			lin, mode, ok := s.repairChild(ch.SessionID)
			if !ok || lin.CallID != r.CallID || lin.TurnID != r.TurnID {
				continue
			}
			r.Subagent = &session.SubagentRef{SessionID: ch.SessionID, Mode: mode}
			if mode == string(permission.ModeAsk) {
				r.Status = string(tool.StatusFailed)
				r.Output = fmt.Sprintf("kin stopped while this subagent (session %s) ran in ask mode: it only read, and gave no answer", ch.SessionID)
			} else {
				r.Status = string(tool.StatusUnknown)
				r.Output = fmt.Sprintf("kin stopped while this subagent (session %s) ran in %s mode: it may have changed files or run commands", ch.SessionID, mode)
			}
			break
		}
	}
	return repairs
}

// repairChild closes what a stopped kin left open in a subagent's session
// (when no kin has it open) and returns where it comes from and its mode.
func (s *Service) repairChild(id string) (session.Lineage, string, bool) {
	log, err := s.store.Open(id)
	if err != nil {
		return session.Lineage{}, "", false
	}
	defer log.Close()
	v, err := s.store.View(id, session.Query{})
	if err != nil || v.Parent() == nil {
		return session.Lineage{}, "", false
	}
	for _, r := range v.Repairs() {
		r.Time = time.Now().UTC()
		if _, _, err := log.Append(r); err != nil {
			s.log.Warn("closing a subagent's session kin left open", zap.String("session", id), zap.Error(err))
			return *v.Parent(), v.Info.Mode, true
		}
	}
	if err := log.Sync(); err != nil {
		s.log.Warn("closing a subagent's session kin left open", zap.String("session", id), zap.Error(err))
	}
	mode := v.Info.Mode
	if mode == "" {
		mode = string(permission.ModeAgent)
	}
	return *v.Parent(), mode, true
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
