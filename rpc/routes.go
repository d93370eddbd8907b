package rpc

// routes is the dispatch table: every request method kin answers.
// Notifications (initialized, exit, $/cancelRequest) are handled in
// handleNotification.
var routes = map[string]route{
	"initialize": {handle: handleInitialize, beforeInit: true},
	"shutdown":   {handle: handleShutdown, beforeInit: true},

	"session/new":    {handle: handleSessionNew},
	"session/list":   {handle: handleSessionList},
	"session/resume": {handle: handleSessionResume, async: true},
	"session/delete": {handle: handleSessionDelete},

	// turn/start answers at once, inline; an input that runs a command may
	// wait on an MCP server (a prompt) or on the editor (undo through its
	// buffers), so it runs off the read loop.
	"turn/start":  {handle: handleTurnStart, asyncIf: isCommand},
	"turn/cancel": {handle: handleTurnCancel, async: true},
	"turn/undo":   {handle: handleTurnUndo, async: true},

	"session/configure": {handle: handleSessionConfigure},
	"commands/list":     {handle: handleCommandsList},

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
