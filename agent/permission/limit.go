package permission

import "github.com/kin-dev/kin/agent/tool"

// KindLimit asks, before a model request that would pass one of the
// person's spend limits (settings.json "limits"), whether to go on:
// continue this turn (allow_once), raise the limit for this session
// (allow_always), or stop (deny). The ids are the usual ones so that every
// front end's refusal, and an ACP client's mapping by kind, mean the same
// here; "stop" is also what a request nobody answers comes to.
const KindLimit = "limit"

// LimitRequest is the question of a turn (turnID "" for a compaction on
// request) at a limit: title says which and how far, detail what each
// choice does, raiseTo the raised limit as a person reads it.
func LimitRequest(sessionID, turnID, title, detail, raiseTo string) Request {
	return Request{
		SessionID: sessionID, TurnID: turnID, Kind: KindLimit,
		Approval: tool.Approval{Title: title, Warning: detail},
		Options: []Option{
			{OptionID: AllowOnce, Name: "Continue this turn", Kind: OptionAllowOnce},
			{OptionID: AllowAlways, Name: "Raise the limit to " + raiseTo + " for this session", Kind: OptionAllowAlways},
			{OptionID: Deny, Name: "Stop", Kind: OptionRejectOnce},
		},
	}
}
