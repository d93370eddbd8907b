package rpc

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
)

func handleSessionNew(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionNewParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	roots, err := sessionRoots(p, s.workspace())
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	o := agent.SessionOptions{Title: p.Title, Roots: roots, Mode: permission.Mode(p.Mode), Model: p.Model, Effort: p.Effort, Origin: p.Origin}
	if p.Worktree != nil && p.Worktree.Want != nil {
		o.Worktree = &agent.WorktreeOptions{Branch: p.Worktree.Want.Branch}
	}
	opened, err := svc.NewSession(o)
	if err != nil {
		return nil, err
	}
	info := sessionInfo(opened.Info)
	withWorktree(s, &info)
	return SessionResult{Session: info, Model: opened.Model, Effort: opened.Effort,
		Instructions: instructionFiles(opened.Instructions)}, nil
}

// sessionRoots are the folders a new session works in: cwd and the
// additional directories when given (absolute, existing directories, with
// symlinks resolved as for workspace folders), else the connection's.
func sessionRoots(p SessionNewParams, workspace []string) ([]string, error) {
	if p.Cwd == "" {
		if len(p.AdditionalDirectories) > 0 {
			return nil, invalid("invalid params: additionalDirectories needs cwd")
		}
		return workspace, nil
	}
	return SessionRoots(p.Cwd, p.AdditionalDirectories)
}

// SessionRoots checks and resolves a session's folders, cwd and the
// additional directories (kin serve's session/new and kin acp's).
func SessionRoots(cwd string, extra []string) ([]string, error) {
	var roots []string
	for i, dir := range append([]string{cwd}, extra...) {
		field := "cwd"
		if i > 0 {
			field = "additionalDirectories"
		}
		if !filepath.IsAbs(dir) {
			return nil, invalid("invalid params: %s %q is not an absolute path", field, dir)
		}
		dir = filepath.Clean(dir)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, invalid("invalid params: %s %q is not a directory", field, dir)
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		roots = append(roots, dir)
	}
	return roots, nil
}

func sessionID(params json.RawMessage) (string, error) {
	var p SessionIDParams
	if err := decode(params, &p); err != nil {
		return "", err
	}
	if p.SessionID == "" {
		return "", invalid("invalid params: sessionId is required")
	}
	return p.SessionID, nil
}

func handleSessionResume(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionResumeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	if p.Limit < 0 {
		return nil, invalid("invalid params: limit must not be negative")
	}
	svc, _ := s.service()
	// A task the resume goes on following may end at once: its call's
	// final turn/toolCall must not overtake the history showing the call
	// working, or the editor shows it working for ever.
	s.hold(SessionKey(p.SessionID), NotifyTurnToolCall)
	res, err := svc.Resume(p.SessionID, agent.ResumeOptions{Limit: p.Limit, Before: p.Before, DefaultRoots: s.workspace()})
	if err != nil {
		return nil, err
	}
	out := SessionResumeResult{Session: sessionInfoWithWorktree(s, res.Info), History: make([]HistoryItem, 0, len(res.History)),
		Cursor: res.Cursor, Pending: pending(s, p.SessionID), RunningTurnID: res.RunningTurnID,
		Model: res.Model, Effort: res.Effort, Instructions: instructionFiles(res.Instructions)}
	for _, h := range res.History {
		out.History = append(out.History, historyItem(h))
	}
	if res.ReadOnly != nil {
		out.ReadOnly, out.ReadOnlyReason = true, res.ReadOnly.Error()
	}
	for _, f := range res.Findings {
		out.Findings = append(out.Findings, reviewFinding(p.SessionID, f.TurnID, f))
	}
	return out, nil
}

func handleSessionDelete(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	id, err := sessionID(params)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	if err := svc.DeleteSession(id); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

func sessionInfo(i session.Info) SessionInfo {
	return SessionInfo{SessionID: i.SessionID, Title: i.Title, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, Turns: i.Turns,
		Cwd: i.Cwd, AdditionalDirectories: i.AdditionalDirectories, Mode: i.Mode, Origin: i.Origin, ParentID: i.ParentID}
}

func historyItem(h session.HistoryItem) HistoryItem {
	out := HistoryItem{Type: h.Type, TurnID: h.TurnID, Text: h.Text, Refusal: h.Refusal, CallID: h.CallID, Name: h.Name, Kind: string(h.Kind),
		Title: h.Title, Arguments: h.Arguments, Status: h.Status, Output: h.Output, Content: toolContent(h.Content), ModelSaw: modelSaw(h.Saw), Links: resourceLinks(h.Links),
		RequestID: h.RequestID, Decision: h.Decision, Reason: h.Reason, ApprovalKind: h.ApprovalKind, Error: h.Error,
		Server: h.Server, Mode: h.Mode, Source: h.Source, Parts: inputParts(h.Parts), Model: h.Model, Effort: h.Effort, Changed: h.Changed,
		Subagent: subagentRef(h.Subagent)}
	if len(h.Files) > 0 {
		out.Files = instructionFiles(h.Files)
	}
	if h.Type == HistoryPlan {
		out.Entries = planEntries(h.Entries)
	}
	if h.Undo != nil {
		u := undoResult(*h.Undo)
		out.Undo = &u
	}
	if h.Rollback != nil {
		rb := rollbackResult(*h.Rollback)
		out.Rollback = &rb
	}
	if h.Fork != nil {
		out.Fork = &ForkRef{SessionID: h.Fork.SessionID, TurnID: h.Fork.TurnID}
	}
	out.RolledBack = h.RolledBack
	if h.Approved != nil {
		d := approvalDetails(*h.Approved)
		out.Approved = &d
	}
	if h.Usage != nil {
		out.Usage = &Usage{InputTokens: h.Usage.InputTokens, OutputTokens: h.Usage.OutputTokens,
			ContextTokens: h.Usage.ContextTokens, ContextWindow: h.Usage.ContextWindow}
	}
	return out
}

// workspace is the editor's workspace folders.
func (s *Server) workspace() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roots
}

// sessionInfoWithWorktree is sessionInfo with the session's worktree.
func sessionInfoWithWorktree(s *Server, i session.Info) SessionInfo {
	info := sessionInfo(i)
	withWorktree(s, &info)
	return info
}
