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
	info, err := svc.NewSession(agent.SessionOptions{Title: p.Title, Roots: roots, Mode: permission.Mode(p.Mode)})
	if err != nil {
		return nil, err
	}
	return SessionResult{Session: info}, nil
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
	var roots []string
	for i, dir := range append([]string{p.Cwd}, p.AdditionalDirectories...) {
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

func handleSessionList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	svc, _ := s.service()
	list, err := svc.ListSessions()
	if err != nil {
		return nil, err
	}
	if list == nil {
		list = []session.Info{}
	}
	return SessionListResult{Sessions: list}, nil
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
	svc, gate := s.service()
	res, err := svc.Resume(p.SessionID, agent.ResumeOptions{Limit: p.Limit, Before: p.Before, DefaultRoots: s.workspace()})
	if err != nil {
		return nil, err
	}
	pending := []any{}
	for _, r := range gate.Pending(p.SessionID) {
		pending = append(pending, r)
	}
	for _, r := range s.elicit.pending(p.SessionID) {
		pending = append(pending, r)
	}
	out := SessionResumeResult{Session: res.Info, History: res.History, Cursor: res.Cursor, Pending: pending,
		RunningTurnID: res.RunningTurnID}
	if res.ReadOnly != nil {
		out.ReadOnly, out.ReadOnlyReason = true, res.ReadOnly.Error()
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

// workspace is the editor's workspace folders.
func (s *Server) workspace() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roots
}
