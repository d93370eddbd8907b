package acp

import (
	"encoding/json"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/rpc"
)

// ACP has no place for a git worktree of kin's, so session/new takes it
// in _meta, under kin's name, as kin serve's session/new takes worktree
// (PROTOCOL.md, Worktrees): {"kin": {"worktree": true | {"branch": name}}}.
// Status, apply and remove have no place in ACP; the person uses kin chat
// or an editor of kin's own for them.

// worktreeMeta reads the worktree a client asked for (nil: none).
func worktreeMeta(m Meta) (*agent.WorktreeOptions, error) {
	kin, _ := m["kin"].(map[string]any)
	raw, ok := kin["worktree"]
	if !ok {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, invalid("invalid params: _meta.kin.worktree: %v", err)
	}
	var w rpc.WorktreeParam
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, invalid("invalid params: _meta.kin.%v", err)
	}
	if w.Want == nil {
		return nil, nil
	}
	return &agent.WorktreeOptions{Branch: w.Want.Branch}, nil
}

// worktreeAnswer is session/new's _meta for a session in a worktree.
func worktreeAnswer(svc *agent.Service, sessionID string) Meta {
	if wt := rpc.WorktreeInfoOf(svc, sessionID); wt != nil {
		return Meta{"kin": map[string]any{"worktree": wt}}
	}
	return nil
}
