package chat

import "github.com/kin-dev/kin/rpc"

// The wire's shapes are rpc's (rpc/protocol_<section>.go, documented in
// rpc/PROTOCOL.md): the very types the server marshals, so this front end
// cannot drift from the contract. golden_test.go shows the recorded
// approvals, forms and lists (rpc/testdata/golden) through the screens.
type (
	initializeParams = rpc.InitializeParams
	initializeResult = rpc.InitializeResult

	sessionNewParams    = rpc.SessionNewParams
	sessionResult       = rpc.SessionResult
	sessionResumeParams = rpc.SessionResumeParams
	sessionListResult   = rpc.SessionListResult
	sessionListParams   = rpc.SessionListParams
	sessionIDParams     = rpc.SessionIDParams
	historyItem         = rpc.HistoryItem
	resumeResult        = rpc.SessionResumeResult

	sessionConfigureParams = rpc.SessionConfigureParams
	sessionConfigureResult = rpc.SessionConfigureResult
	sessionCompactResult   = rpc.SessionCompactResult
	modelsListResult       = rpc.ModelsListResult

	turnStartParams  = rpc.TurnStartParams
	turnStartResult  = rpc.TurnStartResult
	turnCancelResult = rpc.TurnCancelResult
	turnDelta        = rpc.TurnDelta
	toolCall         = rpc.TurnToolCall
	turnCompleted    = rpc.TurnCompleted
	turnReasoning    = rpc.TurnReasoning

	option                = rpc.PermissionOption
	sandboxUse            = rpc.SandboxUse
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
