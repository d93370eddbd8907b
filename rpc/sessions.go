package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent/session"
)

func handleSessionNew(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionNewParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	svc, _ := s.service()
	info, err := svc.NewSession(p.Title)
	if err != nil {
		return nil, err
	}
	return SessionResult{Session: info}, nil
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
	id, err := sessionID(params)
	if err != nil {
		return nil, err
	}
	svc, gate := s.service()
	info, hist, err := svc.Resume(id)
	if err != nil {
		return nil, err
	}
	if hist == nil {
		hist = []session.HistoryItem{}
	}
	pending := []any{}
	for _, r := range gate.Pending(id) {
		pending = append(pending, r)
	}
	for _, r := range s.elicit.pending(id) {
		pending = append(pending, r)
	}
	return SessionResumeResult{Session: info, History: hist, Pending: pending}, nil
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
