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
	if p.Input == "" && len(p.Parts) == 0 {
		return nil, invalid("invalid params: input is empty")
	}
	var in agent.Input
	if len(p.Parts) > 0 {
		in = agent.Input{Parts: agentParts(p.Parts)}
	} else {
		_, _, command, unescaped := agent.ParseCommand(p.Input)
		if command {
			return s.runCommand(ctx, p.SessionID, p.Input)
		}
		in = agent.TextInput(unescaped)
	}
	svc, _ := s.service()
	id, err := s.startTurn(svc, p.SessionID, in)
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
	s.hold(SessionKey(id), NotifyTurnCompleted) // the answer goes out first
	return TurnCancelResult{Cancelled: svc.CancelTurn(id)}, nil
}

// startTurn starts a turn whose turn/started waits for this request's
// answer (route.before).
func (s *Server) startTurn(svc *agent.Service, sessionID string, in agent.Input) (string, error) {
	// A turn cancelled just before still ends (and sends its turn/started,
	// if it had not yet); only then is the next turn's turn/started held
	// until this reply is out, so the hold never waits for the old turn.
	svc.Settle(sessionID)
	s.hold(SessionKey(sessionID), NotifyTurnStarted)
	return svc.StartTurn(sessionID, in, s.workspace())
}
