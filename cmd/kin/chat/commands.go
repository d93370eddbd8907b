package chat

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

const helpText = `Commands:
  /new [TITLE]        start a new session
  /sessions [more]    list sessions, newest first (a subagent's under its parent), 50 at a time; more: the next 50
  /resume ID          continue a session (its history is shown again)
  /cancel             cancel the running turn (Ctrl-C does the same)
  /model [ID [EFFORT]] list the models, or switch this session to one
  /compact            summarise the conversation for the model now
  /mcp                list MCP servers and their state
  /resources          list the MCP servers' resources (@server:uri attaches one)
  /template @SERVER:TEMPLATE  fill in a resource template's {…} parts, one at a
                      time (Tab completes the server's values; empty, Esc or
                      Ctrl-C attaches nothing); the next question attaches the URI
  /saw [CALLID]       show what the model saw of a call's result (the last one)
  /open @SERVER:URI   show an MCP server's resource (a call's link) without
                      sending it to the model
  /mcp instructions NAME   a server's instructions (/mcp accept NAME HASH accepts changed ones)
  /grants             list standing grants
  /grants revoke ID   revoke one
  /plan               show the model's plan for this session
  /mode [MODE]        show or set the mode: ask (only reads), agent (asks for
                      every change), auto-edit (applies file edits unasked)
  /undo [TURN]        put back the files the last turn (or TURN) changed
  /usage              tokens and cost of this session and of today, with the
                      spend limits (settings.json limits)
  /steer WORDS        add WORDS to the running turn (also >WORDS while it runs)
  /rollback [N]       take back the last N turns (1): the model forgets them
                      and their file changes are undone
  /fork [TURN]        continue in a copy of this session (up to TURN)
  /review [base B | commit C]  review the uncommitted changes (or the branch
                      against B, or commit C); findings are listed
  /worktree [status]  the session's git worktree: branch, changes, ahead/behind
  /worktree apply     bring its changes to the checkout (uncommitted)
  /worktree remove [force] remove it and its branch (force: unapplied too)
  /commands           list kin's commands and the MCP servers' prompts
  /SERVER:PROMPT ...  ask what an MCP server's prompt says (name=value args)
  /quit               exit (also Ctrl-D, or Ctrl-C twice at the prompt)
  /help               this text
Anything else is a question for the model (//... sends one that starts with
a slash); @path (or @path:10-20) in it attaches that file of the workspace,
@server:uri an MCP server's resource (kin reads it from the server).
At an approval, Enter or n denies.
At a terminal: Up/Down and Ctrl-R recall what you typed before, Tab completes
/commands, /model ids and @paths, a line ending in \ (or Alt-Enter) goes on in
the next, and a question typed while a turn runs is sent when it ends (start it
with > to add it to the running turn instead).`

// builtinCommands are the commands /help lists, for completion.
func builtinCommands() []string {
	var out []string
	for _, l := range strings.Split(helpText, "\n") {
		// Only the list's lines name a command (indented); /SERVER:PROMPT
		// stands for the MCP prompts: not a name to complete.
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(l, "  /") && strings.ToLower(f[0]) == f[0] && !slices.Contains(out, f[0]) {
			out = append(out, f[0])
		}
	}
	return out
}

func (u *ui) command(line string) {
	fields := strings.Fields(line)
	arg := strings.TrimSpace(strings.TrimPrefix(line, fields[0]))
	switch fields[0] {
	case "/help", "/?":
		u.scr.line(helpText)
		if more := u.serviceHelp(); more != "" {
			u.scr.line(more)
		}
	case "/quit", "/exit", "/q":
		u.quit = true
	case "/new":
		if u.busy() {
			return
		}
		u.newSession(arg, true)
	case "/sessions":
		u.listSessions(len(fields) == 2 && fields[1] == "more")
	case "/resume":
		if len(fields) != 2 {
			u.usage("/resume ID (see /sessions)")
			return
		}
		if u.busy() {
			return
		}
		u.resume(fields[1])
	case "/cancel":
		u.cancelTurn()
	case "/model":
		u.chooseModel(fields)
	case "/compact":
		u.compact()
	case "/mcp":
		u.mcpCommand(fields)
	case "/resources":
		u.loadResources(false)
	case "/saw":
		u.showSaw(arg)
	case "/open":
		u.openResource(arg)
	case "/template":
		u.templateCommand(arg)
	case "/grants":
		switch {
		case len(fields) == 1 || (len(fields) == 2 && fields[1] == "list"):
			u.listGrants()
		case len(fields) == 3 && fields[1] == "revoke":
			u.revokeGrant(fields[2])
		default:
			u.usage("/grants, or /grants revoke ID")
		}
	case "/commands":
		u.listCommands()
	case "/usage":
		u.showUsage()
	case "/steer":
		u.steer(arg)
	case "/rollback":
		u.rollback(arg)
	case "/fork":
		u.fork(arg)
	case "/worktree":
		u.worktreeCommand(fields)
	default:
		// kin's own (/plan, /mode, /undo, …) and the MCP prompts: kin runs
		// them, and says which it does not know.
		u.kinCommand(line)
	}
}

func (u *ui) usage(msg string) {
	u.failed = true
	u.errorf("%s", msg)
}

func (u *ui) busy() bool {
	if u.running {
		u.scr.line(u.scr.dim("A turn is running: wait for it, or /cancel it first."))
		return true
	}
	return false
}

// Origins kin chat gives the sessions no person converses in at its
// prompt, so that editors' session lists can leave them out
// (session/list's interactive).
// sessionPage is how many sessions /sessions lists at a time.
const sessionPage = 50

const (
	originOneShot = "chat-oneshot"
	originPiped   = "chat-piped"
)

func (u *ui) newSession(title string, say bool) bool {
	var res sessionResult
	origin := ""
	switch {
	case u.oneShot:
		origin = originOneShot
	case !u.o.Interactive:
		origin = originPiped
	}
	if err := u.call("session/new", sessionNewParams{Title: title, Origin: origin, Worktree: u.worktreeParam()}, &res); err != nil {
		u.worktreeFail(err)
		return false
	}
	u.session, u.mode = res.Session.SessionID, res.Session.Mode
	u.model, u.effort, u.window = res.Model, res.Effort, nil
	u.loadCommands()
	u.loadModels()
	if say {
		u.scr.line(u.scr.dim("New session " + cleanLine(u.session) + " · model " + modelText(res.Model, res.Effort)))
	}
	u.showWorktree(res.Session.Worktree)
	return true
}

func (u *ui) listSessions(more bool) {
	var res sessionListResult
	// Every session, the one-shot and piped runs' marked as such (editors'
	// pickers may leave those out; here a script's session is easy to find),
	// and subagents' sessions under their parents. A page at a time:
	// "/sessions more" asks for the page after the last one listed.
	p := sessionListParams{IncludeSubagents: true, Limit: sessionPage}
	if more {
		if u.sessionsCursor == "" {
			u.scr.line(u.scr.dim("No more sessions."))
			return
		}
		p.Cursor = u.sessionsCursor
	}
	if err := u.call("session/list", p, &res); err != nil {
		u.fail(err)
		return
	}
	u.sessionsCursor = res.NextCursor
	if len(res.Sessions) == 0 {
		u.scr.line(u.scr.dim("No sessions yet."))
		return
	}
	defer func() {
		if u.sessionsCursor != "" {
			u.scr.line(u.scr.dim("More sessions: /sessions more"))
		}
	}()
	rows, depths := sessionTree(res.Sessions)
	for i, s := range rows {
		mark := "  "
		if s.SessionID == u.session {
			mark = "* "
		}
		if depths[i] > 0 {
			// A subagent's session, under the one it worked for.
			mark += strings.Repeat("  ", depths[i]-1) + "  ↳ "
		}
		turns := "turns"
		if s.Turns == 1 {
			turns = "turn"
		}
		origin := ""
		switch s.Origin {
		case "":
		case originOneShot:
			origin = ", one-shot run"
		case originPiped:
			origin = ", piped run"
		default:
			origin = ", " + cleanLine(s.Origin)
		}
		u.scr.line(fmt.Sprintf("%s%s  %q  %s", mark, cleanLine(s.SessionID), cleanLine(s.Title),
			u.scr.dim(fmt.Sprintf("%d %s, updated %s%s", s.Turns, turns, when(s.UpdatedAt), origin))))
	}
}

func when(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04")
}

// resume redraws a session's history and makes it the current one.
func (u *ui) resume(id string) {
	var res resumeResult
	if err := u.call("session/resume", sessionResumeParams{SessionID: id}, &res); err != nil {
		u.fail(err)
		return
	}
	u.session, u.model, u.effort = res.Session.SessionID, res.Model, res.Effort
	u.window = nil // the history's last turn says
	s := u.scr
	header := fmt.Sprintf("── session %s %q", cleanLine(res.Session.SessionID), cleanLine(res.Session.Title))
	if res.Model != "" {
		header += " · model " + modelText(res.Model, res.Effort)
	}
	s.line(s.dim(header + " ──"))
	if res.Cursor != "" {
		// session/resume gives the newest page: a long session's start
		// (an undo or rollback there among it) is not in it.
		s.line(s.dim("(earlier history not shown: only the newest page of this long session)"))
	}
	for _, h := range res.History {
		u.historyItem(h)
	}
	if res.ReadOnly {
		// Another kin has it open (or its log cannot be written): a
		// question here fails, and an undo shown unfinished may still be
		// running there.
		s.line(s.yellow("[read-only here] " + cleanLine(first(res.ReadOnlyReason, "turns cannot run on this session here"))))
		s.line(s.dim("── read-only: questions cannot continue this session here ──"))
	} else {
		s.line(s.dim("── your next question continues this session ──"))
	}
	u.showWorktree(res.Session.Worktree)
	if res.Session.Mode != "" {
		u.mode = res.Session.Mode
	}
	u.loadCommands()
	u.loadModels()
	for _, p := range res.Pending {
		if a, ok := pendingAsk(p); ok {
			u.addAsk(a)
		}
	}
}

func (u *ui) historyItem(h historyItem) {
	if u.conversationItem(h) || u.branchingItem(h) {
		return
	}
	s := u.scr
	switch h.Type {
	case "user":
		s.line(s.bold("You> ") + clean(h.Text))
		if l := attachedLine(h.Parts); l != "" {
			s.line(s.dim(l))
		}
	case "assistant":
		s.line(s.bold("Assistant> ") + clean(h.Text))
	case "toolCall":
		s.line(fmt.Sprintf("%s %s: %s … %s", s.cyan("[tool]"), cleanLine(h.Name), cleanLine(first(h.Title, h.Name)), s.status(h.Status)))
		s.indented(h.Output, 6)
		if h.Subagent != nil && h.Subagent.SessionID != "" {
			s.line(s.dim("    (the subagent's session: /resume " + cleanLine(h.Subagent.SessionID) + " to read it)"))
		}
	case "decision":
		title := h.Title
		if title == "" && h.Approved != nil {
			title = h.Approved.Title
		}
		s.line(s.dim(fmt.Sprintf("[approval] %s: %s (%s)", cleanLine(title), decisionText(h.Decision), describeReason(h.Reason))))
	case "elicitation":
		who := "MCP server " + cleanLine(h.Server)
		if h.Source == "kin" {
			who = "kin"
		}
		why := ""
		if h.Reason != "" && h.Reason != "person" {
			why = " (" + describeReason(h.Reason) + ")"
		}
		s.line(s.dim(fmt.Sprintf("[%s asked] %s: %s%s", who, cleanLine(h.Title), elicitationText(h.Decision), why)))
	case "plan":
		u.showPlan(h.Entries)
	case "mode":
		u.mode = h.Mode
		s.line(s.dim("[mode] " + cleanLine(h.Mode)))
	case "undo":
		if h.Undo != nil {
			u.showUndo(*h.Undo)
		}
	case "turn":
		if h.Usage != nil {
			u.noteUsage(*h.Usage)
		}
		why := ""
		if h.Error != "" {
			why = ": " + cleanLine(h.Error)
		}
		switch h.Status {
		case "completed", "":
		case "failed":
			s.line(s.red("[turn failed]") + why)
		default:
			s.line(s.yellow("[turn "+cleanLine(h.Status)+"]") + why)
		}
	}
}

func decisionText(d string) string {
	switch d {
	case "allow_once":
		return "allowed once"
	case "allow_always":
		return "always allowed in this session"
	case "allow_always_permanent":
		return "always allowed in every session"
	case "trust":
		return "trusted"
	case "deny":
		return "denied"
	}
	return cleanLine(d)
}

func elicitationText(action string) string {
	switch action {
	case "accept":
		return "answered"
	case "decline":
		return "declined"
	case "cancel":
		return "cancelled"
	}
	return cleanLine(first(action, "unanswered"))
}

func (u *ui) listMCP() {
	var res mcpListResult
	if err := u.call("mcp/list", struct{}{}, &res); err != nil {
		u.fail(err)
		return
	}
	s := u.scr
	if len(res.Servers) == 0 && len(res.Foreign) == 0 {
		s.line(s.dim("No MCP servers configured."))
	}
	for _, r := range res.Servers {
		state := s.status(first(r.State, "?"))
		if !r.Enabled {
			state = s.dim("disabled")
		}
		extra := ""
		if r.State == "connected" {
			extra = fmt.Sprintf(" (%d tools)", r.Tools)
		}
		if r.Trusted {
			extra += ", trusted"
		}
		s.line(fmt.Sprintf("%s  %s  %s  %s%s", cleanLine(r.Name), s.dim(cleanLine(r.Scope)+"/"+cleanLine(r.Transport)), state, s.dim(cleanLine(r.Launch)), extra))
		if r.LastError != "" {
			s.line("    " + s.red(cleanLine(r.LastError)))
		}
		if n := u.instructionsNote(r); n != "" {
			s.line(n)
		}
	}
	for _, r := range res.Shadowed {
		s.line(fmt.Sprintf("%s  %s  %s", cleanLine(r.Name), s.dim(cleanLine(r.Scope)+"/"+cleanLine(r.Transport)), s.dim("hidden by the project entry of the same name")))
	}
	for _, r := range res.Foreign {
		s.line(fmt.Sprintf("%s  %s  %s", cleanLine(r.Name), s.dim("not loaded, from "+cleanLine(r.File)), s.dim(cleanLine(r.Launch))))
	}
	for _, w := range res.Warnings {
		s.line(s.yellow("[warning]") + " " + cleanLine(w))
	}
	for _, n := range res.Notices {
		s.line(s.cyan("[info]") + " " + cleanLine(n))
	}
}

func (u *ui) listGrants() {
	var res grantsListResult
	if err := u.call("grants/list", struct{}{}, &res); err != nil {
		u.fail(err)
		return
	}
	s := u.scr
	if len(res.Grants) == 0 {
		s.line(s.dim("No standing grants."))
		return
	}
	for _, g := range res.Grants {
		s.line(fmt.Sprintf("%s  %s  %s  %s", cleanLine(g.ID), s.dim(cleanLine(g.Scope)), cleanLine(g.Label), s.dim("("+cleanLine(g.Key)+")")))
	}
}

func (u *ui) revokeGrant(id string) {
	if err := u.call("grants/revoke", grantIDParams{ID: id}, nil); err != nil {
		u.fail(err)
		return
	}
	u.scr.line("Revoked " + cleanLine(id) + ".")
}
