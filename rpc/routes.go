package rpc

// routes is the dispatch table: every request method kin answers, and
// where it runs (see dispatch.go). Notifications (initialized, exit,
// $/cancelRequest) are handled in handleNotification, on the read loop.
var routes = map[string]route{
	"initialize": {handle: handleInitialize, beforeInit: true, onLoop: true},
	"shutdown":   {handle: handleShutdown, beforeInit: true, shutsDown: true},

	"session/new":  {handle: handleSessionNew},
	"session/list": {handle: handleSessionList, cancellable: true, bulk: true},
	// A resume may go on following tasks a stopped kin left (their calls'
	// turn/toolCall): the history they update reaches the editor first.
	"session/resume": {handle: handleSessionResume, order: BySession, cancellable: true, bulk: true, before: NotifyTurnToolCall},
	"session/delete": {handle: handleSessionDelete, order: BySession},
	// session/compact asks the model for a summary, which takes a while: a
	// later request of the session (a turn/cancel) does not wait for it.
	MethodSessionCompact: {handle: handleSessionCompact, order: BySession, startsInOrder: true, cancellable: true},
	MethodModelsList:     {handle: handleModelsList},

	"turn/start":  {handle: handleTurnStart, order: BySession, before: NotifyTurnStarted},
	"turn/cancel": {handle: handleTurnCancel, order: BySession, before: NotifyTurnCompleted},
	// A turn's file changes are put back through the session's file access
	// (the editor may be asked): it changes things, so it runs to its end.
	"turn/undo": {handle: handleTurnUndo, order: BySession},
	// Words for a running turn are queued at once: they must not wait
	// behind the session's other requests (the turn is what they join).
	MethodTurnSteer: {handle: handleTurnSteer},
	// A rollback undoes files like turn/undo: it runs to its end.
	MethodTurnRollback: {handle: handleTurnRollback, order: BySession},
	MethodSessionFork:  {handle: handleSessionFork, order: BySession},
	// A review computes its diff (git, bounded) and starts a turn.
	MethodReviewStart: {handle: handleReviewStart, order: BySession, before: NotifyTurnStarted},

	"session/configure": {handle: handleSessionConfigure, order: BySession},
	"commands/list":     {handle: handleCommandsList, cancellable: true},

	// Answers to the person's questions name a requestId, not a session:
	// they run at once (a turn/cancel on the same session resolves the
	// question either way).
	"approval/respond":    {handle: handleApprovalRespond},
	"elicitation/respond": {handle: handleElicitationRespond},

	"mcp/list":       {handle: handleMCPList, order: InGroup("mcp"), cancellable: true},
	"mcp/add":        {handle: handleMCPAdd, order: InGroup("mcp")},
	"mcp/update":     {handle: handleMCPUpdate, order: InGroup("mcp")},
	"mcp/remove":     {handle: handleMCPRemove, order: InGroup("mcp")},
	"mcp/setEnabled": {handle: handleMCPSetEnabled, order: InGroup("mcp")},
	"mcp/adopt":      {handle: handleMCPAdopt, order: InGroup("mcp")},
	"mcp/apply":      {handle: handleMCPApply, order: InGroup("mcp"), startsInOrder: true, cancellable: true},
	"mcp/reload":     {handle: handleMCPReload, order: InGroup("mcp"), startsInOrder: true, cancellable: true},
	"mcp/check":      {handle: handleMCPCheck, order: InGroup("mcp"), startsInOrder: true, cancellable: true},
	"mcp/login":      {handle: handleMCPLogin, order: InGroup("mcp"), startsInOrder: true, cancellable: true},
	// Resources for the person (mcp_resources.go): reads, in no order.
	MethodMCPResources:       {handle: handleMCPResources, cancellable: true},
	MethodCompletionComplete: {handle: handleCompletionComplete, cancellable: true},
	MethodMCPReadResource:    {handle: handleMCPReadResource, cancellable: true},

	// A server's changed instructions, accepted (mcpinstr.go).
	MethodMCPAcceptInstructions: {handle: handleMCPAcceptInstructions, order: InGroup("mcp")},

	"grants/list":   {handle: handleGrantsList, order: InGroup("grants"), cancellable: true},
	"grants/revoke": {handle: handleGrantsRevoke, order: InGroup("grants")},

	// Worktrees (worktree.go): git in the session's worktree and the
	// original checkout; apply and remove wait for a running turn's end
	// no longer than to refuse.
	MethodWorktreeStatus: {handle: handleWorktreeStatus, order: BySession, cancellable: true},
	MethodWorktreeApply:  {handle: handleWorktreeApply, order: BySession},
	MethodWorktreeRemove: {handle: handleWorktreeRemove, order: BySession},

	MethodSkillsList:  {handle: handleSkillsList, cancellable: true},
	MethodTrustList:   {handle: handleTrustList, order: InGroup("grants"), cancellable: true},
	MethodTrustRevoke: {handle: handleTrustRevoke, order: InGroup("grants")},
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
	NotifyTurnStarted, NotifyTurnDelta, NotifyTurnReasoning, NotifyTurnToolCall, NotifyTurnUsage, NotifyTurnCompleted, NotifyTurnPlan,
	NotifyTurnSteered,
	NotifyCommandsChanged,
	NotifyApprovalRequest, NotifyApprovalResolved,
	NotifyElicitationRequest, NotifyElicitationResolved,
	NotifyMCPStatus, NotifyNotice, NotifyLogMessage, NotifyMCPResourceUpdated,
	NotifyDidChangeFiles,
	NotifyReviewFinding,
}
