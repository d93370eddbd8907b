package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent"
)

func handleTurnStart(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p TurnStartParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	if p.Input == "" {
		return nil, invalid("invalid params: input is empty")
	}
	_, _, command, input := agent.ParseCommand(p.Input)
	if command {
		return s.runCommand(ctx, p.SessionID, p.Input)
	}
	svc, _ := s.service()
	id, err := svc.StartTurn(p.SessionID, input, s.workspace())
	if err != nil {
		return nil, err
	}
	return TurnStartResult{TurnID: id}, nil
}

func handleTurnCancel(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	id, err := sessionID(params)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	return TurnCancelResult{Cancelled: svc.CancelTurn(id)}, nil
}

// isCommand reports whether a turn/start's input names a command.
func isCommand(params json.RawMessage) bool {
	var p TurnStartParams
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, _, ok, _ := agent.ParseCommand(p.Input)
	return ok
}
