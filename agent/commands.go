package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/review"
	"github.com/kin-dev/kin/agent/session"
)

// Command is one slash command a front end can offer as /name.
type Command struct {
	// Name is typed after the slash: "undo", or "<server>:<prompt>" for an
	// MCP server's prompt.
	Name        string
	Description string
	// InputHint says what may follow the name ("" when nothing).
	InputHint string
	// Source is "kin" for kin's own commands, else the MCP server's name.
	Source string
	// Arguments are an MCP prompt's.
	Arguments []CommandArgument
}

// CommandArgument is one argument of an MCP prompt.
type CommandArgument struct {
	Name        string
	Description string
	Required    bool
}

// Prompt is an MCP server's prompt, as a command.
type Prompt struct {
	Server, Name, Title, Description string
	Arguments                        []CommandArgument
}

// Prompts are the MCP prompts a front end offers (its connected servers').
type Prompts interface {
	Prompts() []Prompt
	// GetPrompt fetches a prompt's text with its arguments (once; the
	// server is already trusted).
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (string, error)
}

// FrontCommand is a command the front end runs itself (kin's /grants and
// /mcp: views the front end owns).
type FrontCommand struct {
	Command
	Run func(ctx context.Context, sessionID, args string) (CommandResult, error)
}

// CommandResult is what running a command did.
type CommandResult struct {
	Name string
	// Text says what happened, for a person.
	Text string
	// Data is the command's result for a front end that shows it its own
	// way: a session.Undo (undo), the plan's []session.PlanEntry (plan), a
	// Configured (mode), or a front command's own value.
	Data any
	// Ask, set for an MCP prompt, is the text to send as the question: the
	// front end starts the turn with it (StartTurn), so it can order the
	// turn's notifications after its answer.
	Ask string
	// Review, set for /review, is the review to start: the front end starts
	// it (StartReview), as it does Ask.
	Review *Review
}

// Errors of commands.
var (
	// ErrUnknownCommand wraps the name of a /command kin does not know.
	ErrUnknownCommand = errors.New("unknown command")
	// ErrNotCommand: the input is a question, not a command.
	ErrNotCommand = errors.New("not a command")
)

// ownCommands are kin's own, in the order they are listed.
var ownCommands = []Command{
	{Name: "compact", Description: "Summarise the conversation so far to free context", Source: "kin"},
	{Name: "undo", Description: "Undo the file changes of the last turn that changed files (or of the named turn)", InputHint: "[turnId]", Source: "kin"},
	{Name: "plan", Description: "Show the current plan", Source: "kin"},
	{Name: "review", Description: "Review a change: the uncommitted changes, a branch against its base, or one commit", InputHint: "[base NAME | commit SHA]", Source: "kin"},
	{Name: "mode", Description: "Show or set the session's mode", InputHint: "[ask | agent | auto-edit]", Source: "kin"},
	{Name: "model", Description: "Show or set the session's model (and reasoning effort)", InputHint: "[model [effort]]", Source: "kin"},
	{Name: "grants", Description: "List the standing \"always allow\" grants", Source: "kin"},
	{Name: "mcp", Description: "List the MCP servers and their state", Source: "kin"},
	{Name: "skills", Description: "List the skills: yours, the project's (trusted or not), the MCP servers'", Source: "kin"},
	{Name: "trust", Description: "List what you trusted (MCP servers, the project's skills, hooks and instructions), or revoke one", InputHint: "[revoke ID]", Source: "kin"},
}

// Commands lists the commands every session has: kin's own, then every
// prompt of every connected MCP server as /<server>:<prompt>.
func (s *Service) Commands() []Command { return s.SessionCommands("") }

// SessionCommands lists the commands of a session: Commands, then the
// prompts of the session's own servers (Options.SessionPrompts).
func (s *Service) SessionCommands(sessionID string) []Command {
	out := append([]Command(nil), ownCommands...)
	for _, sp := range s.prompts(sessionID) {
		p := sp.Prompt
		desc := p.Description
		if desc == "" {
			desc = p.Title
		}
		out = append(out, Command{Name: p.Server + ":" + p.Name, Description: desc, InputHint: inputHint(p.Arguments),
			Source: p.Server, Arguments: p.Arguments})
	}
	taken := map[string]bool{}
	for _, c := range out {
		taken[c.Name] = true
	}
	for _, fc := range s.opts.Commands {
		taken[fc.Name] = true
	}
	return append(out, s.skillCommands(sessionID, taken)...)
}

// sourcedPrompt is a prompt with the source that fetches it.
type sourcedPrompt struct {
	Prompt
	from Prompts
}

// prompts are the MCP prompts a session offers, by server and name: the
// service's, then the session's own whose command name is not taken (the
// person sees each name once, as the model sees each tool once).
func (s *Service) prompts(sessionID string) []sourcedPrompt {
	var out []sourcedPrompt
	taken := map[string]bool{}
	add := func(src Prompts) {
		if src == nil {
			return
		}
		ps := src.Prompts()
		sort.Slice(ps, func(i, j int) bool {
			if ps[i].Server != ps[j].Server {
				return ps[i].Server < ps[j].Server
			}
			return ps[i].Name < ps[j].Name
		})
		for _, p := range ps {
			if name := p.Server + ":" + p.Name; !taken[name] {
				taken[name] = true
				out = append(out, sourcedPrompt{Prompt: p, from: src})
			}
		}
	}
	add(s.opts.Prompts)
	if sessionID != "" && s.opts.SessionPrompts != nil {
		add(s.opts.SessionPrompts(sessionID))
	}
	return out
}

// inputHint spells a prompt's arguments: "city=… [state=…]".
func inputHint(args []CommandArgument) string {
	var parts []string
	for _, a := range args {
		if a.Required {
			parts = append(parts, a.Name+"=…")
		} else {
			parts = append(parts, "["+a.Name+"=…]")
		}
	}
	return strings.Join(parts, " ")
}

// ParseCommand splits an input that is a command ("/name" and what
// follows, after a space). An input starting "//" is a question that
// starts with "/": unescaped returns it with one slash.
func ParseCommand(input string) (name, args string, ok bool, unescaped string) {
	if strings.HasPrefix(input, "//") {
		return "", "", false, input[1:]
	}
	if !strings.HasPrefix(input, "/") {
		return "", "", false, input
	}
	rest := input[1:]
	end := strings.IndexFunc(rest, func(r rune) bool { return !commandRune(r) })
	if end < 0 {
		end = len(rest)
	}
	if end == 0 || (end < len(rest) && !isSpace(rest[end])) {
		return "", "", false, input // "/", "/ x", "/usr/bin": a question
	}
	return rest[:end], strings.TrimSpace(rest[end:]), true, input
}

func commandRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// RunCommand runs the command an input names: kin's own act at once, an MCP
// prompt is fetched and returned as the question to ask (Ask). An unknown
// command is ErrUnknownCommand, naming it.
func (s *Service) RunCommand(ctx context.Context, sessionID, input string, defaultRoots []string) (CommandResult, error) {
	name, args, ok, _ := ParseCommand(input)
	if !ok {
		return CommandResult{}, ErrNotCommand
	}
	res := CommandResult{Name: name}
	switch name {
	case "undo":
		if strings.ContainsAny(args, " \t") {
			return res, fmt.Errorf("%w: /undo takes one turn id at most", ErrBadParams)
		}
		u, err := s.Undo(ctx, sessionID, args, defaultRoots)
		if err != nil {
			return res, err
		}
		res.Text, res.Data = UndoText(u), u
		return res, nil
	case "plan":
		plan, err := s.Plan(sessionID, defaultRoots)
		if err != nil {
			return res, err
		}
		res.Text, res.Data = planText(plan), plan
		return res, nil
	case "mode":
		c, err := s.Configure(sessionID, SessionConfig{Mode: permission.Mode(args)}, defaultRoots)
		if err != nil {
			return res, err
		}
		res.Text, res.Data = "Mode: "+string(c.Mode)+"."+modeSummary(c.Mode), c
		return res, nil
	case "compact":
		if args != "" {
			return res, fmt.Errorf("%w: /compact takes no arguments", ErrBadParams)
		}
		done, err := s.Compact(ctx, sessionID, defaultRoots)
		if err != nil {
			return res, err
		}
		res.Text, res.Data = "Nothing to summarise since the last summary.", Compacted{}
		if done {
			res.Text, res.Data = "Summarised the conversation: the model goes on from the summary and the recent turns; the whole conversation stays in the session.", Compacted{Done: true}
		}
		return res, nil
	case "model":
		return s.modelCommand(sessionID, args, defaultRoots)
	case "review":
		target, err := review.ParseArgs(args)
		if err != nil {
			return res, fmt.Errorf("%w: %v", ErrBadParams, err)
		}
		r, err := s.PrepareReview(ctx, sessionID, target, defaultRoots)
		if err != nil {
			return res, err
		}
		res.Review, res.Data = r, r
		res.Text = r.Diff.Summary() + "."
		return res, nil
	case "skills":
		list, err := s.Skills(sessionID, defaultRoots)
		if err != nil {
			return res, err
		}
		res.Text, res.Data = skillsText(list), list
		return res, nil
	}
	for _, fc := range s.opts.Commands {
		if fc.Name == name {
			r, err := fc.Run(ctx, sessionID, args)
			r.Name = name
			return r, err
		}
	}
	if server, prompt, isPrompt := strings.Cut(name, ":"); isPrompt {
		for _, p := range s.prompts(sessionID) {
			if p.Server == server && p.Name == prompt {
				return s.runPrompt(ctx, sessionID, p, args, defaultRoots)
			}
		}
	}
	for _, c := range s.SessionCommands(sessionID) {
		if c.Name == name && c.Source == "skill" {
			if err := s.canStart(sessionID, defaultRoots); err != nil {
				return res, err
			}
			res.Ask = skillAsk(name, args)
			res.Text = "Sent /" + name + " as the question: the model loads the skill."
			return res, nil
		}
	}
	return res, fmt.Errorf("%w: /%s (commands/list names the commands)", ErrUnknownCommand, name)
}

// Compacted is what /compact did (CommandResult.Data).
type Compacted struct{ Done bool }

// modelCommand is /model: without arguments it says the session's model
// and the models there are; "/model ID [EFFORT]" switches (Configure).
func (s *Service) modelCommand(sessionID, args string, defaultRoots []string) (CommandResult, error) {
	res := CommandResult{Name: "model"}
	f := strings.Fields(args)
	if len(f) > 2 {
		return res, fmt.Errorf("%w: /model takes a model and an effort at most", ErrBadParams)
	}
	var c SessionConfig
	if len(f) > 0 {
		c.Model = &f[0]
	}
	if len(f) > 1 {
		c.Effort = &f[1]
	}
	got, err := s.Configure(sessionID, c, defaultRoots)
	if err != nil {
		return res, err
	}
	text := "Model: " + got.Model
	if got.Effort != "" {
		text += " (effort " + got.Effort + ")"
	}
	res.Text, res.Data = text+". Models: "+s.models.IDs()+".", got
	return res, nil
}

// runPrompt fetches an MCP prompt: its text is the question to ask.
func (s *Service) runPrompt(ctx context.Context, sessionID string, p sourcedPrompt, args string, defaultRoots []string) (CommandResult, error) {
	res := CommandResult{Name: p.Server + ":" + p.Name}
	values, err := promptArgs(p.Prompt, args)
	if err != nil {
		return res, fmt.Errorf("%w: /%s: %v", ErrBadParams, res.Name, err)
	}
	var missing []string
	for _, a := range p.Arguments {
		if a.Required && values[a.Name] == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return res, fmt.Errorf("%w: /%s needs %s (%s)", ErrBadParams, res.Name, strings.Join(missing, ", "), inputHint(p.Arguments))
	}
	// Refuse before anything reaches the server when no turn could run.
	if err := s.canStart(sessionID, defaultRoots); err != nil {
		return res, err
	}
	text, err := p.from.GetPrompt(ctx, p.Server, p.Name, values)
	if err != nil {
		return res, fmt.Errorf("/%s: %w", res.Name, err)
	}
	res.Ask = text
	res.Text = "Sent the text of /" + res.Name + " as the question."
	return res, nil
}

// canStart reports why a turn could not start on the session now.
func (s *Service) canStart(sessionID string, defaultRoots []string) error {
	sess, _, err := s.open(sessionID, defaultRoots, session.Query{})
	if err != nil {
		return err
	}
	if cfg, _ := s.sessionModel(sess); cfg.Missing() != "" {
		return fmt.Errorf("%w: %s", ErrNotConfigured, cfg.Missing())
	}
	sess.settled()
	defer sess.mu.Unlock()
	if sess.notOwned != nil {
		return sess.notOwned
	}
	if sess.running != nil || sess.held {
		return ErrTurnRunning
	}
	return nil
}

// promptArgs reads "/server:prompt" arguments: name=value pairs (values
// quoted with "…" or '…' when they hold spaces) or bare values, which fill
// the arguments in order. A prompt with a single argument takes the whole
// text as its value unless it is written name=value.
func promptArgs(p Prompt, text string) (map[string]string, error) {
	out := map[string]string{}
	if text == "" {
		return out, nil
	}
	if len(p.Arguments) == 1 {
		a := p.Arguments[0].Name
		if v, ok := strings.CutPrefix(text, a+"="); ok {
			text = v
		}
		out[a] = unquote(strings.TrimSpace(text))
		return out, nil
	}
	words, err := splitWords(text)
	if err != nil {
		return nil, err
	}
	next := 0
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok && p.takes(k) {
			out[k] = v
			continue
		}
		for next < len(p.Arguments) && out[p.Arguments[next].Name] != "" {
			next++
		}
		if next == len(p.Arguments) {
			return nil, fmt.Errorf("too many values (it takes %s)", argNames(p.Arguments))
		}
		out[p.Arguments[next].Name] = w
	}
	return out, nil
}

func (p Prompt) takes(name string) bool {
	for _, a := range p.Arguments {
		if a.Name == name {
			return true
		}
	}
	return false
}

func argNames(args []CommandArgument) string {
	if len(args) == 0 {
		return "no arguments"
	}
	var n []string
	for _, a := range args {
		n = append(n, a.Name)
	}
	return strings.Join(n, ", ")
}

// splitWords splits on spaces, keeping quoted parts ("a b", 'a b') whole.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in := rune(0)
	started := false
	for _, r := range s {
		switch {
		case in != 0 && r == in:
			in = 0
		case in != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			in, started = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if in != 0 {
		return nil, fmt.Errorf("a quote (%c) is not closed", in)
	}
	if started {
		out = append(out, cur.String())
	}
	return out, nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// UndoText says what an undo did, for a person (/undo's answer; kin acp
// replays an undo so).
func UndoText(u session.Undo) string {
	var b strings.Builder
	if u.Error != "" {
		// An undo kin was stopped in: which files went back is not known.
		fmt.Fprintf(&b, "Undo of %s unfinished: %s", UndoneTurn(u), u.Error)
	} else {
		fmt.Fprintf(&b, "Undid %s: restored %d file", UndoneTurn(u), len(u.Restored))
		if len(u.Restored) != 1 {
			b.WriteString("s")
		}
	}
	for _, p := range u.Restored {
		b.WriteString("\n  restored " + p)
	}
	for _, c := range u.Conflicts {
		b.WriteString("\n  not restored " + c.Path + ": " + c.Reason)
		if c.Diff != "" {
			b.WriteString("\n" + indent(c.Diff, "    "))
		}
	}
	for _, n := range u.NotUndoable {
		what := n.Title
		if what == "" {
			what = n.Name
		}
		b.WriteString("\n  not undoable: " + what + " (" + n.Reason + ")")
	}
	return b.String()
}

// RollbackText is what a rollback did, for a person: the turns taken
// back, what undoing each one's files did (UndoText), and each turn whose
// files could not be put back, or may not all be (kin stopped in it).
func RollbackText(rb session.Rollback) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Took back %d turn(s): %s (the model no longer sees them)", len(rb.Turns), strings.Join(rb.Turns, ", "))
	for _, u := range rb.Undos {
		b.WriteString("\n" + indent(UndoText(u), "  "))
	}
	for _, e := range rb.Errors {
		b.WriteString("\n  not undone: turn " + e.TurnID + ": " + e.Error)
	}
	return b.String()
}

// UndoneTurn names the turn an undo undid for a person: by its question's
// first words, and by its id only when the conversation no longer holds the
// question.
func UndoneTurn(u session.Undo) string {
	if u.Question != "" {
		return `"` + u.Question + `"`
	}
	return "turn " + u.TurnID
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

// planText shows a plan: one line per step with its status.
func planText(plan []session.PlanEntry) string {
	if len(plan) == 0 {
		return "No plan yet."
	}
	var b strings.Builder
	b.WriteString("Plan:")
	for _, e := range plan {
		mark := "[ ]"
		switch e.Status {
		case PlanInProgress:
			mark = "[~]"
		case PlanCompleted:
			mark = "[x]"
		}
		b.WriteString("\n  " + mark + " " + e.Content)
		if e.Priority != "" {
			b.WriteString(" (" + e.Priority + ")")
		}
	}
	return b.String()
}

// modeSummary says what a mode lets kin do, for a person.
func modeSummary(m permission.Mode) string {
	switch m {
	case permission.ModeAsk:
		return " kin only reads: nothing is changed and no command runs."
	case permission.ModeAutoEdit:
		return " File edits inside the workspace are applied without asking; commands and sensitive paths still ask."
	}
	return " Every change and command asks for approval."
}

// skillsText lists skills for a person: name, where from, trusted or not.
func skillsText(list []SkillInfo) string {
	if len(list) == 0 {
		return "No skills. kin looks in $KIN_HOME/skills, ~/.agents/skills and the project's .agents/skills and .claude/skills."
	}
	var b strings.Builder
	b.WriteString("Skills:")
	for _, s := range list {
		state := ""
		if !s.Trusted {
			state = " [not trusted: kin asks first]"
		}
		fmt.Fprintf(&b, "\n  /%s (%s)%s: %s", s.Name, s.Source, state, s.Description)
		for _, sh := range s.Shadows {
			fmt.Fprintf(&b, "\n    (also in %s, not used)", sh)
		}
	}
	return b.String()
}
