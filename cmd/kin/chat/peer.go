package chat

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// kin's own commands and the MCP prompts, run by kin (turn/start with the
// command's line); the plan, modes and undo as kin chat shows them.

// kinCommand sends a /command to kin and shows what it did: kin's own
// answer with text (and a result), an MCP prompt starts a turn whose
// question is the prompt's text.
func (u *ui) kinCommand(line string) {
	if u.session == "" && !u.newSession("", false) {
		return
	}
	var res turnStartResult
	if err := u.call("turn/start", turnStartParams{SessionID: u.session, Input: line}, &res); err != nil {
		u.fail(err)
		return
	}
	c := res.Command
	if c == nil { // a question after all (kin read no command in it)
		u.startedTurn()
		return
	}
	if res.TurnID != "" && c.Name == "review" {
		u.scr.line(u.scr.dim(cleanLine(c.Text)))
		u.startedTurn()
		return
	}
	if res.TurnID != "" {
		u.scr.line(u.scr.dim("/"+cleanLine(c.Name)+" asks:") + " " + clean(c.Inserted))
		u.startedTurn()
		return
	}
	switch c.Name {
	case "mode":
		var r rpc.SessionConfigureResult
		if remarshal(c.Result, &r) == nil && r.Mode != "" {
			u.mode = r.Mode
		}
	case "plan":
		var p rpc.PlanResult
		if remarshal(c.Result, &p) == nil {
			u.showPlan(p.Entries)
			return
		}
	case "undo":
		var r rpc.TurnUndoResult
		if remarshal(c.Result, &r) == nil {
			u.showUndo(r)
			return
		}
	}
	u.scr.line(clean(c.Text))
}

func (u *ui) startedTurn() {
	u.running = true
	u.calls = map[string]*callState{}
}

func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// listCommands shows what /name may be, kin's and the MCP servers'.
func (u *ui) listCommands() {
	if u.session == "" && !u.newSession("", false) {
		return
	}
	var res rpc.CommandsListResult
	if err := u.call(rpc.MethodCommandsList, rpc.CommandsListParams{SessionID: u.session}, &res); err != nil {
		u.fail(err)
		return
	}
	s := u.scr
	for _, c := range res.Commands {
		name := "/" + cleanLine(c.Name)
		if c.InputHint != "" {
			name += " " + cleanLine(c.InputHint)
		}
		from := ""
		if c.Source != "kin" {
			from = s.dim(" (MCP server " + cleanLine(c.Source) + ")")
		}
		s.line(fmt.Sprintf("%-28s %s%s", name, cleanLine(c.Description), from))
	}
}

// showPlan draws a plan: one line per step with its status. At the line
// editor, a plan that is still the last thing on screen is redrawn in
// place, so a plan the model updates step by step stays one checklist.
func (u *ui) showPlan(entries []rpc.PlanEntry) {
	s := u.scr
	if len(entries) == 0 {
		s.replace("plan", []string{s.dim("[plan] no steps")})
		return
	}
	lines := []string{s.cyan("[plan]")}
	for _, e := range entries {
		mark := "[ ]"
		switch e.Status {
		case "in_progress":
			mark = s.yellow("[~]")
		case "completed":
			mark = s.green("[x]")
		}
		// Tabs as spaces (expandTabs, from the column after "  [ ] "):
		// a step is read whole, never drawn over itself at the margin.
		line := "  " + mark + " " + expandTabs(cleanLine(e.Content), 6)
		if e.Priority != "" {
			line += s.dim(" (" + oneLine(e.Priority) + ")")
		}
		lines = append(lines, line)
	}
	s.replace("plan", lines)
}

// loadCommands asks kin for the commands /name may be (kin's own and
// every MCP server's prompts), for Tab to complete them and /help to list
// them; kin says commands/changed when the list changes.
func (u *ui) loadCommands() {
	if u.session == "" {
		return
	}
	var res rpc.CommandsListResult
	if err := u.call(rpc.MethodCommandsList, rpc.CommandsListParams{SessionID: u.session}, &res); err != nil {
		return // an older kin: kin chat's own commands are still there
	}
	u.commands = res.Commands
	if u.ed == nil {
		return
	}
	names := builtinCommands()
	for _, c := range res.Commands {
		if n := "/" + c.Name; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	u.ed.comp.set(names)
}

// serviceHelp lists for /help the commands kin has that /help's own text
// does not name (an MCP server's prompts, above all).
func (u *ui) serviceHelp() string {
	own := builtinCommands()
	var b strings.Builder
	for _, c := range u.commands {
		name := "/" + c.Name
		if slices.Contains(own, name) {
			continue
		}
		if c.InputHint != "" {
			name += " " + c.InputHint
		}
		if b.Len() == 0 {
			b.WriteString("Also, from kin and the MCP servers:\n")
		}
		fmt.Fprintf(&b, "  %-19s %s\n", cleanLine(name), cleanLine(c.Description))
	}
	return strings.TrimRight(b.String(), "\n")
}

// showUndo says what an undo did.
func (u *ui) showUndo(r rpc.TurnUndoResult) {
	s := u.scr
	if r.Error != "" {
		// An undo kin was stopped in: which files went back is not known.
		s.line(s.cyan("[undo]") + fmt.Sprintf(" turn %s: unfinished", cleanLine(r.TurnID)))
		s.line("  " + s.yellow(cleanLine(r.Error)))
	} else {
		s.line(s.cyan("[undo]") + fmt.Sprintf(" turn %s: %d file(s) restored", cleanLine(r.TurnID), len(r.Restored)))
	}
	for _, p := range r.Restored {
		s.line("  restored " + cleanLine(p))
	}
	for _, c := range r.Conflicts {
		s.line("  " + s.yellow("not restored") + " " + cleanLine(c.Path) + ": " + cleanLine(c.Reason))
		if c.Diff != "" {
			s.indented(c.Diff, 20)
		}
	}
	for _, n := range r.NotUndoable {
		s.line("  " + s.dim("not undoable: "+cleanLine(first(n.Title, n.Name))+" ("+cleanLine(n.Reason)+")"))
	}
}
