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
	return SessionResult{Session: sessionInfo(info)}, nil
}

func handleSessionList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	svc, _ := s.service()
	list, err := svc.ListSessions()
	if err != nil {
		return nil, err
	}
	out := SessionListResult{Sessions: []SessionInfo{}}
	for _, i := range list {
		out.Sessions = append(out.Sessions, sessionInfo(i))
	}
	return out, nil
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
	svc, _ := s.service()
	info, hist, err := svc.Resume(id)
	if err != nil {
		return nil, err
	}
	out := SessionResumeResult{Session: sessionInfo(info), History: []HistoryItem{}, Pending: pending(s.asks, id)}
	for _, h := range hist {
		out.History = append(out.History, historyItem(h))
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
	return SessionInfo{SessionID: i.SessionID, Title: i.Title, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, Turns: i.Turns}
}

func historyItem(h session.HistoryItem) HistoryItem {
	out := HistoryItem{Type: h.Type, TurnID: h.TurnID, Text: h.Text, CallID: h.CallID, Name: h.Name, Kind: string(h.Kind),
		Title: h.Title, Arguments: h.Arguments, Status: h.Status, Output: h.Output, Content: toolContent(h.Content),
		RequestID: h.RequestID, Decision: h.Decision, Reason: h.Reason, ApprovalKind: h.ApprovalKind, Error: h.Error,
		Server: h.Server, Mode: h.Mode}
	if h.Approved != nil {
		d := approvalDetails(*h.Approved)
		out.Approved = &d
	}
	if h.Usage != nil {
		out.Usage = &Usage{InputTokens: h.Usage.InputTokens, OutputTokens: h.Usage.OutputTokens}
	}
	return out
}
