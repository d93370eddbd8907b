package chat

import "github.com/kin-dev/kin/rpc"

// The wire's shapes are rpc's (rpc/protocol_<section>.go, documented in
// rpc/PROTOCOL.md): the very types the server marshals, so this front end
// cannot drift from the contract. The golden frames test in this package
// reads every recorded frame through the screens below.
type (
	initializeParams = rpc.InitializeParams
	initializeResult = rpc.InitializeResult

	sessionResult     = rpc.SessionResult
	sessionListResult = rpc.SessionListResult
	sessionIDParams   = rpc.SessionIDParams
	historyItem       = rpc.HistoryItem
	resumeResult      = rpc.SessionResumeResult

	turnStartParams  = rpc.TurnStartParams
	turnStartResult  = rpc.TurnStartResult
	turnCancelResult = rpc.TurnCancelResult
	turnDelta        = rpc.TurnDelta
	toolCall         = rpc.TurnToolCall
	turnCompleted    = rpc.TurnCompleted

	option                = rpc.PermissionOption
	diff                  = rpc.Diff
	approvalRequest       = rpc.ApprovalRequest
	approvalRespondParams = rpc.ApprovalRespondParams
	approvalResolved      = rpc.ApprovalResolved

	elicitationField         = rpc.ElicitationField
	elicitationRequest       = rpc.ElicitationRequest
	elicitationRespondParams = rpc.ElicitationRespondParams
	elicitationResolved      = rpc.ElicitationResolved

	mcpStatus        = rpc.MCPStatus
	notice           = rpc.Notice
	mcpListResult    = rpc.MCPListResult
	grantsListResult = rpc.GrantsListResult
	grantIDParams    = rpc.GrantIDParams
)
