package rpc

// PROTOCOL.md, Subagents: what the delegate tool's child sessions add to
// the turn notifications, the questions to the person, history and
// session/list.

// Nesting is on every notification of a subagent's turn (turn/started,
// turn/delta, turn/reasoning, turn/toolCall, turn/usage, turn/completed,
// notice) and on its questions (approval/request, approval/resolved,
// elicitation/request, elicitation/resolved): the session, turn and
// delegate call the subagent works for. Absent on a person's session's.
type Nesting struct {
	ParentSessionID string `json:"parentSessionId,omitempty"`
	ParentTurnID    string `json:"parentTurnId,omitempty"`
	ParentCallID    string `json:"parentCallId,omitempty"`
}

// SubagentInfo is, on a delegate call's turn/toolCall and history item,
// its subagent: the session it runs in (absent while it waits for a free
// slot, with waiting), its mode and model.
type SubagentInfo struct {
	SessionID string `json:"sessionId,omitempty"`
	Mode      string `json:"mode"`
	Model     string `json:"model,omitempty"`
	Waiting   bool   `json:"waiting,omitempty"`
}
