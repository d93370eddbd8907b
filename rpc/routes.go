package rpc

// routes is the dispatch table: every request method kin answers.
var routes = map[string]route{
	"initialize": {handle: handleInitialize, beforeInit: true},
	"shutdown":   {handle: handleShutdown, beforeInit: true},

	"session/new":    {handle: handleSessionNew},
	"session/list":   {handle: handleSessionList},
	"session/resume": {handle: handleSessionResume, async: true},
	"session/delete": {handle: handleSessionDelete},

	"turn/start":  {handle: handleTurnStart},
	"turn/cancel": {handle: handleTurnCancel, async: true},

	"approval/respond":    {handle: handleApprovalRespond},
	"elicitation/respond": {handle: handleElicitationRespond},

	"mcp/list":       {handle: handleMCPList},
	"mcp/add":        {handle: handleMCPAdd},
	"mcp/update":     {handle: handleMCPUpdate},
	"mcp/remove":     {handle: handleMCPRemove},
	"mcp/setEnabled": {handle: handleMCPSetEnabled},
	"mcp/adopt":      {handle: handleMCPAdopt},
	"mcp/apply":      {handle: handleMCPApply, async: true},
	"mcp/reload":     {handle: handleMCPReload, async: true},
	"mcp/check":      {handle: handleMCPCheck, async: true},
	"mcp/login":      {handle: handleMCPLogin, async: true},

	"grants/list":   {handle: handleGrantsList},
	"grants/revoke": {handle: handleGrantsRevoke},
}

// editorNotifications are the notifications kin handles, in
// handleNotification (and documentNotifications, the editor's buffers);
// any other is ignored.
var editorNotifications = []string{NotifyInitialized, NotifyExit, NotifyCancelRequest,
	NotifyDidOpen, NotifyDidChange, NotifyDidClose}

// kinRequests are the requests kin sends the editor.
var kinRequests = []string{MethodApplyEdit}

// kinNotifications are the notifications kin sends.
var kinNotifications = []string{
	NotifyTurnStarted, NotifyTurnDelta, NotifyTurnToolCall, NotifyTurnCompleted,
	NotifyApprovalRequest, NotifyApprovalResolved,
	NotifyElicitationRequest, NotifyElicitationResolved,
	NotifyMCPStatus, NotifyNotice, NotifyLogMessage,
	NotifyDidChangeFiles,
}
