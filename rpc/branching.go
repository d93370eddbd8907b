package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/session"
)

func handleTurnSteer(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p TurnSteerParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.SessionID == "":
		return nil, invalid("invalid params: sessionId is required")
	case p.TurnID == "":
		return nil, invalid("invalid params: turnId is required")
	case p.Input == "" && len(p.Parts) == 0:
		return nil, invalid("invalid params: input is empty")
	}
	in := agent.TextInput(p.Input)
	if len(p.Parts) > 0 {
		in = agent.Input{Parts: agentParts(p.Parts)}
	}
	svc, _ := s.service()
	if err := svc.Steer(p.SessionID, p.TurnID, in); err != nil {
		return nil, err
	}
	return TurnSteerResult{Queued: true}, nil
}

func handleTurnRollback(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p TurnRollbackParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	if p.Turns < 1 {
		return nil, invalid("invalid params: turns must be 1 or more")
	}
	svc, _ := s.service()
	rb, err := svc.Rollback(ctx, p.SessionID, p.Turns, s.workspace())
	if err != nil && len(rb.Turns) == 0 {
		return nil, err
	}
	return rollbackResult(rb), err
}

func rollbackResult(rb session.Rollback) TurnRollbackResult {
	out := TurnRollbackResult{Turns: append([]string{}, rb.Turns...), Undos: []TurnUndoResult{}}
	for _, u := range rb.Undos {
		out.Undos = append(out.Undos, undoResult(u))
	}
	for _, e := range rb.Errors {
		out.Errors = append(out.Errors, RollbackError{TurnID: e.TurnID, Error: e.Error})
	}
	return out
}

func handleSessionFork(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SessionForkParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required")
	}
	svc, _ := s.service()
	opened, err := svc.Fork(p.SessionID, p.TurnID, s.workspace())
	if err != nil {
		return nil, err
	}
	return SessionForkResult{SessionResult: SessionResult{Session: sessionInfoWithWorktree(s, opened.Info), Model: opened.Model, Effort: opened.Effort,
		Instructions: instructionFiles(opened.Instructions)}, ForkedFrom: ForkRef{SessionID: p.SessionID, TurnID: p.TurnID}}, nil
}

// Steered sends turn/steered (agent.SteerEvents).
func (e events) Steered(v agent.Steered) {
	e.s.notify(NotifyTurnSteered, TurnSteered{SessionID: v.SessionID, TurnID: v.TurnID, Input: v.Input, Parts: inputParts(v.Parts)})
}
