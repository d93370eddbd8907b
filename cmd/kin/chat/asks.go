package chat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
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
	d, permanent := parseDecision(a.req, t)
	if d == "" {
		u.scr.line(u.scr.dim("Please answer " + approvalChoices(a.req) + " (Enter denies)."))
		return false
	}
	u.respondApproval(a.req.RequestID, d, permanent)
	return true
}

func (a *approvalAsk) refuse(u *ui, why string) {
	u.scr.line(u.scr.red("denied") + " " + u.scr.dim("("+why+")"))
	u.respondApproval(a.req.RequestID, "deny", false)
}

// renderApproval prints an approval block in the shape of spec 000 section 1.
func renderApproval(s *screen, r approvalRequest) {
	switch r.Kind {
	case "server_launch":
		s.line(s.bold(fmt.Sprintf("[Server launch: %s]", cleanLine(r.Server))) + " " + cleanLine(r.Title))
		if r.Transport != "" {
			s.line("Transport: " + cleanLine(r.Transport))
		}
		if r.Destination != "" {
			if r.Transport == "stdio" {
				s.line("Command: " + cleanLine(r.Destination))
			} else {
				s.line("URL: " + cleanLine(r.Destination))
			}
		}
		if r.Scope != "" {
			s.line("Scope: " + cleanLine(r.Scope))
		}
		if r.Arguments != "" {
			// The env and header names it is given, values masked.
			s.line("Settings: " + cleanLine(r.Arguments))
		}
		if r.Warning != "" {
			s.line(s.yellow(cleanLine(r.Warning)))
		}
		return
	case "acknowledge_unknown":
		s.line(s.bold(fmt.Sprintf("[Unknown outcome: %s]", cleanLine(r.Tool))) + " " + cleanLine(r.Title))
		if r.Warning != "" {
			s.line(s.yellow(cleanLine(r.Warning)))
		}
		return
	}
	if r.Server != "" || r.Destination != "" {
		// An MCP call: where the arguments go, exactly as spec 000 shows.
		s.line(s.bold(fmt.Sprintf("[Tool: %s]", cleanLine(r.Tool))))
		s.line("Server: " + strconv.Quote(r.Server))
		s.line("Destination: " + strconv.Quote(r.Destination))
		s.line("Tool: " + strconv.Quote(mcpToolName(r)))
		s.line("Arguments: " + strconv.Quote(r.Arguments))
		if r.Warning != "" {
			s.line(s.yellow(cleanLine(r.Warning)))
		}
	} else {
		head := s.bold(fmt.Sprintf("[Tool: %s]", cleanLine(r.Tool)))
		if r.Title != "" {
			head += " " + cleanLine(r.Title)
		}
		s.line(head)
		shown := false
		if r.Command != "" {
			cmd := strings.Split(strings.TrimRight(clean(r.Command), "\n"), "\n")
			s.line("Command: " + cmd[0])
			for _, l := range cmd[1:] {
				s.line("         " + l)
			}
			shown = true
		}
		if r.Cwd != "" {
			s.line("Cwd: " + cleanLine(r.Cwd))
		}
		if sb := r.Sandbox; sb != nil {
			s.line("Sandbox: " + sandboxLine(*sb))
		}
		for _, d := range r.Diffs {
			s.line("File: " + cleanLine(d.Path))
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
			s.line(s.yellow(cleanLine(r.Warning)))
		}
	}
	if r.AlwaysAsk && r.Warning == "" {
		s.line(s.yellow("This call is always asked: it is outside the workspace or touches a sensitive path."))
	}
}

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

func hasOption(r approvalRequest, id string) bool {
	for _, o := range r.Options {
		if o.OptionID == id {
			return true
		}
	}
	return false
}

// approvalChoices is the bracketed list of keys, deny being the default.
func approvalChoices(r approvalRequest) string {
	keys := []string{}
	if hasOption(r, "allow_once") {
		keys = append(keys, "y")
	}
	keys = append(keys, "N")
	for _, o := range r.Options {
		switch o.OptionID {
		case "allow_always":
			keys = append(keys, "a(lways: "+cleanLine(o.Name)+")")
			if r.Kind == "tool_call" {
				keys = append(keys, "p(ermanently, in every session)")
			}
		case "trust":
			keys = append(keys, "t(rust)")
		}
	}
	return "[" + strings.Join(keys, "/") + "]"
}

func approvalPrompt(r approvalRequest) string {
	if r.Kind == "acknowledge_unknown" {
		return "Acknowledge? " + approvalChoices(r) + " "
	}
	return "Approve this operation? " + approvalChoices(r) + " "
}

// parseDecision maps an answer to an optionId, "" when it is not one of
// the request's options. Enter and n deny; p is "always" kept for every
// session (a permanent grant).
func parseDecision(r approvalRequest, t string) (decision string, permanent bool) {
	var d string
	switch t {
	case "", "n", "no":
		return "deny", false
	case "y", "yes":
		d = "allow_once"
	case "a", "always":
		d = "allow_always"
	case "p", "permanently":
		if r.Kind != "tool_call" {
			return "", false
		}
		d, permanent = "allow_always", true
	case "t", "trust":
		d = "trust"
	default:
		return "", false
	}
	if !hasOption(r, d) {
		return "", false
	}
	return d, permanent
}

// ---- elicitations ----

type elicitAsk struct {
	req     elicitationRequest
	field   int
	content map[string]any
}

func (a *elicitAsk) id() string { return a.req.RequestID }

func (a *elicitAsk) show(u *ui) { renderElicitation(u.scr, a.req) }

func renderElicitation(s *screen, r elicitationRequest) {
	what := "asks"
	if r.Purpose == "oauth" {
		what = "sign-in"
	}
	s.line(s.bold(fmt.Sprintf("[MCP server %s %s]", cleanLine(r.Server), what)) + " " + cleanLine(r.Message))
	if r.Mode == "url" {
		s.line("URL: " + cleanLine(r.URL))
		return
	}
	s.line(clean("(Enter on an empty required field, or /cancel, declines the whole request.)"))
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
	case "enum":
		s.line(name + ":")
		for i, v := range f.Enum {
			label := v
			if i < len(f.EnumNames) && f.EnumNames[i] != "" {
				label = f.EnumNames[i]
			}
			s.linef("  %d) %s", i+1, cleanLine(label))
		}
		name = fmt.Sprintf("choose 1-%d", len(f.Enum))
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

func showValue(f elicitationField, v any) string {
	if b, ok := v.(bool); ok {
		if b {
			return "yes"
		}
		return "no"
	}
	if f.Type == "enum" {
		s := fmt.Sprint(v)
		for i, e := range f.Enum {
			if e == s && i < len(f.EnumNames) && f.EnumNames[i] != "" {
				return f.EnumNames[i]
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
	a.field++
	if a.field < len(a.req.Fields) {
		return false
	}
	if err := u.respondElicitation(a.req.RequestID, "accept", a.content); err != nil && !isNotFound(err) {
		// The service refused the content: ask again from the start.
		a.field, a.content = 0, nil
		return false
	}
	return true
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
		if i, err := strconv.Atoi(t); err == nil && i >= 1 && i <= len(f.Enum) {
			return f.Enum[i-1], ""
		}
		for i, e := range f.Enum {
			if strings.EqualFold(t, e) || (i < len(f.EnumNames) && strings.EqualFold(t, f.EnumNames[i])) {
				return e, ""
			}
		}
		return nil, fmt.Sprintf("Please choose 1-%d.", len(f.Enum))
	}
	n := utf8.RuneCountInString(t)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Sprintf("Please type at least %d characters.", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Sprintf("Please type at most %d characters.", *f.MaxLength)
	}
	return t, ""
}

// pendingAsk decodes one entry of session/resume's pending list.
func pendingAsk(raw json.RawMessage) (ask, bool) {
	var probe struct {
		Mode    string          `json:"mode"`
		Options json.RawMessage `json:"options"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return nil, false
	}
	if probe.Mode != "" {
		var r elicitationRequest
		if json.Unmarshal(raw, &r) != nil || r.RequestID == "" {
			return nil, false
		}
		return &elicitAsk{req: r}, true
	}
	var r approvalRequest
	if json.Unmarshal(raw, &r) != nil || r.RequestID == "" {
		return nil, false
	}
	return &approvalAsk{req: r}, true
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
