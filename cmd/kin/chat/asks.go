package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/rpc"
)

// ask is a question the person must answer before something can go on: an
// approval or an elicitation. Asks wait in a queue; the first is shown, and
// input lines answer it until it is done.
type ask interface {
	id() string
	// show prints what is being asked, once.
	show(u *ui)
	// prompt prints what the current step needs (choices, hints) and
	// returns the prompt line.
	prompt(u *ui) string
	// answer takes one input line and reports whether the ask is done.
	answer(u *ui, line string) bool
	// refuse answers no on the person's behalf (input closed, Ctrl-C).
	refuse(u *ui, why string)
}

// ---- approvals ----

type approvalAsk struct{ req approvalRequest }

func (a *approvalAsk) id() string { return a.req.RequestID }

func (a *approvalAsk) show(u *ui) { renderApproval(u.scr, a.req) }

func (a *approvalAsk) prompt(u *ui) string { return approvalPrompt(a.req) }

func (a *approvalAsk) answer(u *ui, line string) bool {
	t := strings.ToLower(strings.TrimSpace(line))
	if t == "/cancel" {
		// Cancelling the turn denies this request; the service says so
		// with approval/resolved, which takes it off the queue.
		u.cancelTurn()
		return false
	}
	d := parseDecision(a.req, t)
	if d == "" {
		u.scr.line(u.scr.dim("Please answer " + approvalChoices(a.req) + " (Enter denies)."))
		return false
	}
	u.respondApproval(a.req.RequestID, d)
	return true
}

func (a *approvalAsk) refuse(u *ui, why string) {
	u.scr.line(u.scr.red("denied") + " " + u.scr.dim("("+why+")"))
	u.respondApproval(a.req.RequestID, denyOption(a.req))
}

// renderApproval prints an approval block in the shape of spec 000 section 1.
func renderApproval(s *screen, r approvalRequest) {
	subagentOrigin(s, r)
	switch r.Kind {
	case "server_launch":
		s.line(s.bold(fmt.Sprintf("[Server launch: %s]", oneLine(r.Server))) + " " + oneLine(r.Title))
		if r.Transport != "" {
			s.line("Transport: " + oneLine(r.Transport))
		}
		if r.Destination != "" {
			if r.Transport == "stdio" {
				s.line("Command: " + oneLine(r.Destination))
			} else {
				s.line("URL: " + oneLine(r.Destination))
			}
		}
		if r.Scope != "" {
			s.line("Scope: " + oneLine(r.Scope))
		}
		if r.Arguments != "" {
			// The env and header names it is given, values masked.
			s.line("Settings: " + oneLine(r.Arguments))
		}
		if r.Warning != "" {
			s.line(s.yellow(oneLine(r.Warning)))
		}
		return
	case "acknowledge_unknown":
		// An acknowledgement, not an approval: what kin knows of each
		// call, line by line.
		s.line(s.bold(fmt.Sprintf("[Unknown outcome: %s]", oneLine(r.Tool))) + " " + oneLine(r.Title))
		for _, l := range strings.Split(strings.TrimRight(expandTabs(clean(r.Warning), 0), "\n"), "\n") {
			if l != "" {
				l = s.yellow(l)
			}
			s.line(l)
		}
		return
	case "continue":
		// The turn reached its limit of tool calls (maxToolCallsPerTurn).
		s.line(s.bold("[Call limit]") + " " + oneLine(r.Title))
		return
	case rpc.KindLimit:
		renderLimit(s, r) // usage.go
		return
	case rpc.KindProjectTrust, rpc.KindMCPSkill:
		renderTrust(s, r)
		return
	}
	if r.Server != "" || r.Destination != "" {
		// An MCP call: where the arguments go, exactly as spec 000 shows.
		s.line(s.bold(fmt.Sprintf("[Tool: %s]", oneLine(r.Tool))))
		s.line("Server: " + strconv.Quote(r.Server))
		s.line("Destination: " + strconv.Quote(r.Destination))
		s.line("Tool: " + strconv.Quote(mcpToolName(r)))
		s.line("Arguments: " + strconv.Quote(r.Arguments))
		if r.Warning != "" {
			s.line(s.yellow(oneLine(r.Warning)))
		}
	} else {
		head := s.bold(fmt.Sprintf("[Tool: %s]", oneLine(r.Tool)))
		if r.Title != "" {
			head += " " + oneLine(r.Title)
		}
		s.line(head)
		shown := false
		if r.Command != "" {
			cmd := strings.Split(strings.TrimRight(clean(spellCR(r.Command)), "\n"), "\n")
			s.line("Command: " + expandTabs(cmd[0], 9))
			for _, l := range cmd[1:] {
				s.line("         " + expandTabs(l, 9))
			}
			shown = true
		}
		if r.Cwd != "" {
			s.line("Cwd: " + oneLine(r.Cwd))
		}
		if sb := r.Sandbox; sb != nil {
			s.line("Sandbox: " + sandboxLine(*sb))
		}
		for _, d := range r.Diffs {
			s.line("File: " + oneLine(d.Path))
			if d.Unified != "" {
				s.diff(d.Unified)
			} else {
				s.diff(wholeFileDiff(d))
			}
			shown = true
		}
		if !shown && r.Arguments != "" {
			s.line("Arguments: " + strconv.Quote(r.Arguments))
		}
		if r.Warning != "" {
			s.line(s.yellow(oneLine(r.Warning)))
		}
	}
	if r.AlwaysAsk && r.Warning == "" {
		s.line(s.yellow("This call is always asked: it is outside the workspace or touches a sensitive path."))
	}
}

// renderTrust shows what a project_trust or mcp_skill request asks to
// trust: each item with where it is, what it runs or says, and its digest.
func renderTrust(s *screen, r approvalRequest) {
	head := "[Trust this folder's skills, hooks and instructions?]"
	if r.Kind == rpc.KindMCPSkill {
		head = fmt.Sprintf("[Skill from MCP server %s]", oneLine(r.Server))
	}
	s.line(s.bold(head) + " " + oneLine(r.Title))
	for _, it := range r.Items {
		line := fmt.Sprintf("  %s %s", oneLine(it.Kind), oneLine(it.Path))
		if it.Name != "" && it.Kind != "instructions" {
			line += " (" + oneLine(it.Name) + ")"
		}
		if it.Changed {
			line += s.yellow(" changed since you trusted it")
		}
		s.line(line)
		if it.Detail != "" {
			s.line("      " + oneLine(it.Detail))
		}
		s.line("      " + oneLine(it.Digest))
	}
	if r.Warning != "" {
		s.line(s.yellow(oneLine(r.Warning)))
	}
}

// oneLine is text from outside for one line of an approval: cleaned, and
// with its tabs as spaces (expandTabs): what the person reads there is
// what runs, every character of it.
func oneLine(s string) string { return expandTabs(cleanLine(spellCR(s)), 0) }

// spellCR spells out every carriage return of text an approval shows,
// a "\r\n" line ending's too (clean keeps that one as a line break, for
// answers): in a command it is part of the word before it, so "cd sub\r"
// fails and the next line runs where kin started, and "cd sub" over
// "rm -rf ./*" must not look like a removal in sub.
func spellCR(s string) string { return strings.ReplaceAll(s, "\r", `\r`) }

// sandboxLine says how a command runs, in a few words (the warning that
// follows it says the rest).
func sandboxLine(sb sandboxUse) string {
	if !sb.Confined {
		return "none: runs unconfined"
	}
	var w []string
	for _, p := range sb.Writable {
		w = append(w, cleanLine(p))
	}
	l := "confined; may change only " + strings.Join(append(w, "its own /tmp"), ", ")
	if sb.Network {
		return l + "; with network access"
	}
	return l + "; no network"
}

// mcpToolName is the server's own name for the tool: serverTool, or for an
// older kin recovered from the exposed name (mcp__<server>__<tool>) or the
// title "Call <tool> on <server>".
func mcpToolName(r approvalRequest) string {
	if r.ServerTool != "" {
		return r.ServerTool
	}
	if rest, ok := strings.CutPrefix(r.Tool, "mcp__"+r.Server+"__"); ok && rest != "" {
		return rest
	}
	if mid, ok := strings.CutPrefix(r.Title, "Call "); ok {
		if name, ok := strings.CutSuffix(mid, " on "+r.Server); ok && name != "" {
			return name
		}
	}
	return r.Tool
}

func wholeFileDiff(d diff) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(d.OldText, "\n"), "\n") {
		if d.OldText != "" {
			b.WriteString("-" + l + "\n")
		}
	}
	for _, l := range strings.Split(strings.TrimRight(d.NewText, "\n"), "\n") {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

// optionKeys are the keys typed for kin's options; an option without one
// is chosen by its number.
var optionKeys = map[string]string{
	"allow_once": "y", "allow_always": "a", "allow_always_permanent": "p", "trust": "t", "deny": "n",
}

// choice is one option of a request and the key that picks it.
type choice struct {
	key string
	opt option
}

// choices are the request's options as kin sent them, with their names,
// except that the refusal always comes last: it is the default (Enter,
// end of input, Ctrl-C), in a fixed place.
func choices(r approvalRequest) []choice {
	var out []choice
	var deny *choice
	for i, o := range r.Options {
		key := optionKeys[o.OptionID]
		if key == "" {
			key = fmt.Sprint(i + 1)
		}
		c := choice{key: key, opt: o}
		if deny == nil && isRefusal(o) {
			deny = &c
			continue
		}
		out = append(out, c)
	}
	if deny != nil {
		out = append(out, *deny)
	}
	return out
}

func isRefusal(o option) bool { return o.OptionID == "deny" || o.Kind == "reject_once" }

// denyOption is the optionId that refuses the request: its first refusal,
// the one choices puts last.
func denyOption(r approvalRequest) string {
	for _, o := range r.Options {
		if isRefusal(o) {
			return o.OptionID
		}
	}
	return "deny"
}

// approvalChoices is the bracketed list of keys and option names, the
// refusal (the default) in capitals.
func approvalChoices(r approvalRequest) string {
	var parts []string
	deny := denyOption(r)
	for _, c := range choices(r) {
		key := c.key
		if c.opt.OptionID == deny {
			key = strings.ToUpper(key)
		}
		parts = append(parts, key+": "+cleanLine(first(c.opt.Name, c.opt.OptionID)))
	}
	return "[" + strings.Join(parts, " / ") + "]"
}

func approvalPrompt(r approvalRequest) string {
	switch r.Kind {
	case "acknowledge_unknown":
		return "Acknowledge? " + approvalChoices(r) + " "
	case "continue", rpc.KindLimit:
		return "Go on? " + approvalChoices(r) + " "
	}
	return "Approve this operation? " + approvalChoices(r) + " "
}

// parseDecision maps an answer to an optionId, "" when it is not one of
// the request's options. Enter and n refuse.
func parseDecision(r approvalRequest, t string) string {
	switch t {
	case "", "n", "no":
		return denyOption(r)
	case "yes":
		t = "y"
	case "always":
		t = "a"
	case "permanently":
		t = "p"
	}
	for _, c := range choices(r) {
		if c.key == t {
			return c.opt.OptionID
		}
	}
	return ""
}

// ---- elicitations ----

type elicitAsk struct {
	req     elicitationRequest
	field   int
	content map[string]any
	// redo are the fields still to ask again after the service refused
	// the answer (their indexes, after field); nil on the first pass.
	redo []int
}

func (a *elicitAsk) id() string { return a.req.RequestID }

func (a *elicitAsk) show(u *ui) { renderElicitation(u.scr, a.req) }

func renderElicitation(s *screen, r elicitationRequest) {
	what := "asks"
	if r.Purpose == "oauth" {
		what = "sign-in"
	}
	who := "MCP server " + cleanLine(r.Server)
	if r.Source == "kin" {
		who = "kin"
	}
	s.line(s.bold(fmt.Sprintf("[%s %s]", who, what)) + " " + cleanLine(r.Message))
	if r.Mode == "url" {
		s.line("URL: " + cleanLine(r.URL))
		return
	}
	s.line(answerGoesTo(r))
	s.line(clean("(Enter on an empty required field, or /cancel, declines the whole request.)"))
}

// answerGoesTo says where a form's answer goes: the model may ask for
// anything through kin's ask tool, a password included, so its form says
// plainly that the model reads the answer.
func answerGoesTo(r elicitationRequest) string {
	if r.Source == "kin" {
		return "What you answer goes to the model and stays in this session. Never type a password, key or token here."
	}
	return "What you answer goes to MCP server " + cleanLine(r.Server) + "."
}

func (a *elicitAsk) prompt(u *ui) string {
	if a.req.Mode == "url" {
		return "Open this URL yourself? kin never opens it. [y/N] "
	}
	if a.field >= len(a.req.Fields) {
		return "Send? [y/N] "
	}
	f := a.req.Fields[a.field]
	s := u.scr
	if f.Description != "" {
		s.line(s.dim(cleanLine(f.Description)))
	}
	name := cleanLine(first(f.Title, f.Name))
	var hint []string
	switch f.Type {
	case "enum", "multi_select":
		s.line(name + ":")
		for i := range f.Enum {
			s.linef("  %d) %s", i+1, cleanLine(optionLabel(f, i)))
		}
		name = fmt.Sprintf("choose 1-%d", len(f.Enum))
		if f.Type == "multi_select" {
			name = fmt.Sprintf("choose any of 1-%d, separated by commas", len(f.Enum))
			if r := countHint(f); r != "" {
				hint = append(hint, r)
			}
		}
	case "string":
		if f.Format != "" {
			hint = append(hint, formatHint(f.Format))
		}
	case "boolean":
		hint = append(hint, "y/n")
	case "integer":
		hint = append(hint, "whole number"+rangeHint(f))
	case "number":
		hint = append(hint, "number"+rangeHint(f))
	}
	if f.Required {
		hint = append(hint, "required")
	} else {
		hint = append(hint, "optional")
	}
	if f.Default != nil {
		hint = append(hint, "Enter for "+cleanLine(showValue(f, f.Default)))
	}
	return fmt.Sprintf("%s (%s): ", name, strings.Join(hint, ", "))
}

func rangeHint(f elicitationField) string {
	switch {
	case f.Minimum != nil && f.Maximum != nil:
		return fmt.Sprintf(" %v–%v", *f.Minimum, *f.Maximum)
	case f.Minimum != nil:
		return fmt.Sprintf(" ≥ %v", *f.Minimum)
	case f.Maximum != nil:
		return fmt.Sprintf(" ≤ %v", *f.Maximum)
	}
	return ""
}

// optionLabel is an enum option's title, or its value when it has none.
func optionLabel(f elicitationField, i int) string {
	if i < len(f.EnumNames) && f.EnumNames[i] != "" {
		return f.EnumNames[i]
	}
	return f.Enum[i]
}

// countHint says how many choices a multi-select takes.
func countHint(f elicitationField) string {
	switch {
	case f.MinItems != nil && f.MaxItems != nil:
		return fmt.Sprintf("%d to %d of them", *f.MinItems, *f.MaxItems)
	case f.MinItems != nil:
		return fmt.Sprintf("at least %d", *f.MinItems)
	case f.MaxItems != nil:
		return fmt.Sprintf("at most %d", *f.MaxItems)
	}
	return ""
}

func formatHint(format string) string {
	switch format {
	case "email":
		return "an email address"
	case "uri":
		return "a URI"
	case "date":
		return "a date, YYYY-MM-DD"
	case "date-time":
		return "a date and time, e.g. 2026-11-30T23:15:00Z"
	}
	return cleanLine(format)
}

func showValue(f elicitationField, v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, showValue(elicitationField{Type: "enum", Enum: f.Enum, EnumNames: f.EnumNames}, e))
		}
		return strings.Join(parts, ", ")
	}
	if f.Type == "enum" || f.Type == "multi_select" {
		s := fmt.Sprint(v)
		for i, e := range f.Enum {
			if e == s {
				return optionLabel(f, i)
			}
		}
		return s
	}
	return fmt.Sprint(v)
}

func (a *elicitAsk) answer(u *ui, line string) bool {
	t := strings.TrimSpace(line)
	if a.req.Mode == "url" {
		switch strings.ToLower(t) {
		case "y", "yes":
			u.respondElicitation(a.req.RequestID, "accept", nil)
		default:
			u.respondElicitation(a.req.RequestID, "decline", nil)
		}
		return true
	}
	if t == "/cancel" {
		u.scr.line(u.scr.dim("declined"))
		u.respondElicitation(a.req.RequestID, "decline", nil)
		return true
	}
	if a.field >= len(a.req.Fields) { // a form with no fields: send or not
		if strings.EqualFold(t, "y") || strings.EqualFold(t, "yes") {
			u.respondElicitation(a.req.RequestID, "accept", map[string]any{})
		} else {
			u.respondElicitation(a.req.RequestID, "decline", nil)
		}
		return true
	}
	if a.content == nil {
		a.content = map[string]any{}
	}
	f := a.req.Fields[a.field]
	if t == "" {
		switch {
		case f.Default != nil:
			a.content[f.Name] = f.Default
		case f.Required:
			u.scr.line(u.scr.dim("declined (a required field was left empty)"))
			u.respondElicitation(a.req.RequestID, "decline", nil)
			return true
		}
	} else {
		v, problem := parseField(f, t)
		if problem != "" {
			u.scr.line(u.scr.yellow(problem))
			return false
		}
		a.content[f.Name] = v
	}
	switch {
	case a.redo != nil && len(a.redo) > 0:
		a.field, a.redo = a.redo[0], a.redo[1:]
		return false
	case a.redo == nil && a.field+1 < len(a.req.Fields):
		a.field++
		return false
	}
	err := u.respondElicitation(a.req.RequestID, "accept", a.content)
	if err == nil || isNotFound(err) {
		return true
	}
	// The service refused the content: ask again for the fields it named
	// (all of them when it named none of the form's), keeping the rest.
	a.redo = []int{}
	for _, name := range refusedFields(err) {
		for i, f := range a.req.Fields {
			if f.Name == name {
				a.redo = append(a.redo, i)
				delete(a.content, name)
			}
		}
	}
	if len(a.redo) == 0 {
		a.redo, a.content = nil, nil
		a.field = 0
		return false
	}
	a.field, a.redo = a.redo[0], a.redo[1:]
	return false
}

// refusedFields are the names an elicitation/respond error's data gives
// for the fields that do not fit, each said on screen.
func refusedFields(err error) []string {
	var re *jsonrpc2.Error
	if !errors.As(err, &re) || re.Data == nil {
		return nil
	}
	var d rpc.ElicitationAnswerError
	if json.Unmarshal(*re.Data, &d) != nil {
		return nil
	}
	names := make([]string, len(d.Fields))
	for i, f := range d.Fields {
		names[i] = f.Name
	}
	return names
}

func (a *elicitAsk) refuse(u *ui, why string) {
	u.scr.line(u.scr.dim("declined (" + why + ")"))
	u.respondElicitation(a.req.RequestID, "decline", nil)
}

// parseField checks one typed value against its field; problem says what
// is wrong, for asking again.
func parseField(f elicitationField, t string) (any, string) {
	switch f.Type {
	case "boolean":
		switch strings.ToLower(t) {
		case "y", "yes", "true":
			return true, ""
		case "n", "no", "false":
			return false, ""
		}
		return nil, "Please answer y or n."
	case "integer", "number":
		n, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			return nil, "Please type a number."
		}
		if f.Type == "integer" && n != math.Trunc(n) {
			return nil, "Please type a whole number."
		}
		if (f.Minimum != nil && n < *f.Minimum) || (f.Maximum != nil && n > *f.Maximum) {
			return nil, "Please type a number in range" + rangeHint(f) + "."
		}
		return n, ""
	case "enum":
		if v, ok := pick(f, t); ok {
			return v, ""
		}
		return nil, fmt.Sprintf("Please choose 1-%d.", len(f.Enum))
	case "multi_select":
		var out []any
		seen := map[string]bool{}
		for _, part := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' }) {
			v, ok := pick(f, strings.TrimSpace(part))
			if !ok {
				return nil, fmt.Sprintf("Please choose among 1-%d, separated by commas (%q is not one).", len(f.Enum), strings.TrimSpace(part))
			}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		if (f.MinItems != nil && len(out) < *f.MinItems) || (f.MaxItems != nil && len(out) > *f.MaxItems) {
			return nil, "Please choose " + countHint(f) + "."
		}
		return out, ""
	}
	if f.Format != "" && !formatOK(f.Format, t) {
		return nil, "Please type " + formatHint(f.Format) + "."
	}
	n := utf8.RuneCountInString(t)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Sprintf("Please type at least %d characters.", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Sprintf("Please type at most %d characters.", *f.MaxLength)
	}
	if f.Pattern != "" {
		// kin checks it again; one Go cannot read is left to that check.
		if re, err := regexp.Compile(f.Pattern); err == nil && !re.MatchString(t) {
			return nil, "Please type text matching " + cleanLine(f.Pattern) + "."
		}
	}
	return t, ""
}

// pick finds an option by its number, value or title.
func pick(f elicitationField, t string) (string, bool) {
	if i, err := strconv.Atoi(t); err == nil && i >= 1 && i <= len(f.Enum) {
		return f.Enum[i-1], true
	}
	for i, e := range f.Enum {
		if strings.EqualFold(t, e) || strings.EqualFold(t, optionLabel(f, i)) {
			return e, true
		}
	}
	return "", false
}

// formatOK is a first check of a string format; the service checks again.
func formatOK(format, t string) bool {
	switch format {
	case "email":
		at := strings.IndexByte(t, '@')
		return at > 0 && at < len(t)-1 && !strings.ContainsAny(t, " <>")
	case "uri":
		u, err := url.Parse(t)
		return err == nil && u.Scheme != ""
	case "date":
		_, err := time.Parse(time.DateOnly, t)
		return err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, t)
		return err == nil
	}
	return true
}

// pendingAsk is the question of one entry of session/resume's pending list.
func pendingAsk(p rpc.PendingRequest) (ask, bool) {
	switch {
	case p.Elicitation != nil && p.Elicitation.RequestID != "":
		return &elicitAsk{req: *p.Elicitation}, true
	case p.Approval != nil && p.Approval.RequestID != "":
		return &approvalAsk{req: *p.Approval}, true
	}
	return nil, false
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
