package rpc

import (
	"context"
	"encoding/json"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/worktree"
)

// worktreeError is a worktree refusal as -32020 with its kind and paths.
func worktreeError(err error) (*jsonrpc2.Error, bool) {
	e, ok := agent.IsWorktreeError(err)
	if !ok {
		return nil, false
	}
	re := &jsonrpc2.Error{Code: CodeWorktree, Message: e.Message}
	re.SetError(WorktreeErrorData{Kind: e.Kind, Paths: e.Paths, Sessions: e.Sessions})
	return re, true
}

func worktreeInfo(i worktree.Info) *WorktreeInfo {
	return &WorktreeInfo{Path: i.Path, Repo: i.Repo, Branch: i.Branch, Base: i.Base, BaseBranch: i.BaseBranch}
}

func worktreeFiles(fs []worktree.File) []WorktreeFile {
	out := make([]WorktreeFile, 0, len(fs))
	for _, f := range fs {
		out = append(out, WorktreeFile{Path: f.Path, Status: f.Status})
	}
	return out
}

// withWorktree adds the session's worktree to its session object.
func withWorktree(s *Server, info *SessionInfo) {
	if svc, _ := s.service(); svc != nil {
		if wt, ok := svc.Worktree(info.SessionID); ok {
			info.Worktree = worktreeInfo(wt)
		}
	}
}

func handleWorktreeStatus(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	id, err := sessionID(params)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	st, err := svc.WorktreeStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	return WorktreeStatusResult{WorktreeInfo: *worktreeInfo(st.Info), Files: worktreeFiles(st.Files),
		Ahead: st.Ahead, Behind: st.Behind, Uncommitted: st.Uncommitted, Unapplied: st.Unapplied}, nil
}

func handleWorktreeApply(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	id, err := sessionID(params)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	a, err := svc.WorktreeApply(ctx, id)
	if err != nil {
		return nil, err
	}
	return WorktreeApplyResult{Files: worktreeFiles(a.Files), RunsLater: a.RunsLater}, nil
}

func handleWorktreeRemove(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p WorktreeRemoveParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	svc, _ := s.service()
	r, err := svc.WorktreeRemove(ctx, p.SessionID, p.Force)
	if err != nil {
		return nil, err
	}
	return WorktreeRemoveResult{Branch: r.Branch, Commit: r.Commit}, nil
}

// IsWorktreeError reports whether err is a worktree refusal (kin acp maps
// it as kin serve does).
func IsWorktreeError(err error) bool { return isWorktreeError(err) }

// WorktreeError is a worktree refusal as -32020 with its kind and paths.
func WorktreeError(err error) (*jsonrpc2.Error, bool) { return worktreeError(err) }

// WorktreeInfoOf is a session's worktree as the session object shows it
// (nil: none).
func WorktreeInfoOf(svc *agent.Service, sessionID string) *WorktreeInfo {
	if wt, ok := svc.Worktree(sessionID); ok {
		return worktreeInfo(wt)
	}
	return nil
}

func isWorktreeError(err error) bool {
	_, ok := agent.IsWorktreeError(err)
	return ok
}
