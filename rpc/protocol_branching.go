package rpc

import (
	"encoding/json"
	"errors"
)

// PROTOCOL.md, Branching: turn/steer, turn/rollback, session/fork and the
// turn/steered notification.

// Methods and the notification of branching.
const (
	MethodTurnSteer    = "turn/steer"
	MethodTurnRollback = "turn/rollback"
	MethodSessionFork  = "session/fork"
	NotifyTurnSteered  = "turn/steered"
)

// CodeTurnEnded answers turn/steer for a turn that is not running (it
// ended, or was never this session's): start a new turn instead.
const CodeTurnEnded = -32016

// TurnSteerParams is turn/steer's params: the turn the words join, and the
// words as a string (Input) or a list of parts (Parts), as turn/start
// takes them.
type TurnSteerParams struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Input     string      `json:"-"`
	Parts     []InputPart `json:"-"`
}

// MarshalJSON writes input as turn/start's does.
func (p TurnSteerParams) MarshalJSON() ([]byte, error) {
	in, err := TurnStartParams{SessionID: p.SessionID, Input: p.Input, Parts: p.Parts}.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(in, &m); err != nil {
		return nil, err
	}
	m["turnId"], _ = json.Marshal(p.TurnID)
	return json.Marshal(m)
}

// UnmarshalJSON reads input as a string or a list of parts ("parts" is
// taken as a synonym of a list input).
func (p *TurnSteerParams) UnmarshalJSON(b []byte) error {
	var w struct {
		TurnID string      `json:"turnId"`
		Parts  []InputPart `json:"parts"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var s TurnStartParams
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	*p = TurnSteerParams{SessionID: s.SessionID, TurnID: w.TurnID, Input: s.Input, Parts: s.Parts}
	if len(w.Parts) > 0 {
		if len(p.Parts) > 0 || p.Input != "" {
			return errors.New("give input or parts, not both")
		}
		p.Parts = w.Parts
	}
	return nil
}

// TurnSteerResult is turn/steer's result: the words are queued for the
// turn's next model request (turn/steered says when they joined).
type TurnSteerResult struct {
	Queued bool `json:"queued"`
}

// TurnSteered is turn/steered's params: the person's words joined the
// running turn here (before the model request that carries them).
type TurnSteered struct {
	SessionID string      `json:"sessionId"`
	TurnID    string      `json:"turnId"`
	Input     string      `json:"input"`
	Parts     []InputPart `json:"parts,omitempty"`
}

// TurnRollbackParams is turn/rollback's params: how many of the last turns
// leave the conversation.
type TurnRollbackParams struct {
	SessionID string `json:"sessionId"`
	Turns     int    `json:"turns"`
}

// TurnRollbackResult is turn/rollback's result (and a rollback history
// item's rollback): the turns taken out, newest first, and what undoing
// their file changes did, per turn that had any (turn/undo's result).
type TurnRollbackResult struct {
	Turns  []string         `json:"turns"`
	Undos  []TurnUndoResult `json:"undos"`
	Errors []RollbackError  `json:"errors,omitempty"`
}

// RollbackError is a turn whose file changes could not be undone at all.
type RollbackError struct {
	TurnID string `json:"turnId"`
	Error  string `json:"error"`
}

// SessionForkParams is session/fork's params; without turnId, the fork
// takes every turn that has ended.
type SessionForkParams struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
}

// SessionForkResult is session/fork's result: the new session, as
// session/new describes one, and where it came from.
type SessionForkResult struct {
	SessionResult
	ForkedFrom ForkRef `json:"forkedFrom"`
}

// ForkRef names the session (and turn) a fork came from.
type ForkRef struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId,omitempty"`
}
