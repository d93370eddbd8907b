package chat

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"

	"github.com/kin-dev/kin/rpc"
)

// MCP resource templates in kin chat (issue 24 §4): /template
// @server:uriTemplate asks for each of the template's variables in order at
// the prompt, as the editors do (VS Code's resourceTemplatePicker.ts,
// Neovim's resources.lua fill): the server's values for what is typed come
// from kin's completion/complete (the values chosen before go as
// context.arguments), Tab completes them at the line editor, any text is
// accepted, and Enter on an empty value, /cancel, Ctrl-C or (at the line
// editor) Esc attaches nothing. The URI the values make (RFC 6570, values percent-encoded) is
// attached to the next question as a resource part, as an @server:uri
// mention would be.
//
// A command and not Tab on an @server: template word: Tab completion is the
// line editor's AutoCompleter, which must answer at once with endings of
// the word, and cannot hold a dialogue of several questions; the asks (an
// approval, a form) are how kin chat already asks things in steps at its
// prompt, each step a line of its own.

// completeTimeout bounds one completion/complete asked for a variable's
// values: Tab waits for it (the editor's goroutine), so a slow server must
// not hold the line; free text still goes.
const completeTimeout = 2 * time.Second

// valuesShown is how many of the server's values a step lists.
const valuesShown = 12

// templateAsk fills in one template, a variable a step.
type templateAsk struct {
	key              string // its ask id, never one of the service's
	server, template string
	names            []string
	tmpl             *uritemplate.Template
	step             int
	chosen           map[string]string
	call             func(method string, params, out any) error
}

func (a *templateAsk) id() string { return a.key }

func (a *templateAsk) show(u *ui) {
	s := u.scr
	s.line(s.bold("[template]") + " @" + cleanLine(a.server) + ":" + cleanLine(a.template))
	tab, esc := "", ""
	if u.ed != nil {
		tab, esc = "Tab completes the server's values; ", "Esc, "
	}
	s.line(s.dim(fmt.Sprintf("%d part(s) to fill in: %s. %sany value is accepted; Enter on an empty line, %s/cancel or Ctrl-C attaches nothing.",
		len(a.names), cleanLine(strings.Join(a.names, ", ")), tab, esc)))
}

// question is the current step as the completer asks it.
func (a *templateAsk) question() *templateQuestion {
	ctx := map[string]string{}
	for k, v := range a.chosen {
		ctx[k] = v
	}
	return &templateQuestion{server: a.server, template: a.template, name: a.names[a.step], chosen: ctx, call: a.call}
}

func (a *templateAsk) prompt(u *ui) string {
	q := a.question()
	if u.ed != nil {
		u.ed.comp.setQuestion(q)
	}
	// What the server offers for nothing typed yet, so that the choices
	// are seen without Tab (and without the editor, where there is none).
	vals, more, err := q.values("")
	s := u.scr
	switch {
	case err != nil:
		s.line(s.dim("no values from " + cleanLine(a.server) + ": " + errText(err)))
	case len(vals) > 0:
		shown := vals
		if len(shown) > valuesShown {
			shown, more = shown[:valuesShown], true
		}
		clean := make([]string, len(shown))
		for i, v := range shown {
			clean[i] = cleanLine(v)
		}
		l := "values: " + strings.Join(clean, ", ")
		if more {
			l += ", … (type the start, then Tab)"
		}
		s.line(s.dim(l))
	}
	name := cleanLine(a.names[a.step])
	if len(a.names) > 1 {
		name += fmt.Sprintf(" (%d of %d)", a.step+1, len(a.names))
	}
	return name + ": "
}

func (a *templateAsk) answer(u *ui, line string) bool {
	t := strings.TrimSpace(line)
	if t == "" || t == "/cancel" {
		a.done(u)
		u.scr.line(u.scr.dim("nothing attached"))
		return true
	}
	a.chosen[a.names[a.step]] = t
	a.step++
	if a.step < len(a.names) {
		return false
	}
	a.done(u)
	uri, err := expandTemplate(a.tmpl, a.chosen)
	if err != nil {
		u.usage("the template cannot be filled in: " + err.Error())
		return true
	}
	u.attachNext(a.server, uri)
	return true
}

func (a *templateAsk) refuse(u *ui, why string) {
	a.done(u)
	u.scr.line(u.scr.dim("nothing attached (" + why + ")"))
}

// done: the completer completes no variable any more.
func (a *templateAsk) done(u *ui) {
	if u.ed != nil {
		u.ed.comp.setQuestion(nil)
	}
}

// isTemplate reports whether an ask is a template's, kin chat's own and
// not the service's: Ctrl-C ends it even while a turn runs.
func isTemplate(a ask) bool {
	_, ok := a.(*templateAsk)
	return ok
}

// expandTemplate is the URI the values make (RFC 6570, string values),
// as the editors make it.
func expandTemplate(t *uritemplate.Template, chosen map[string]string) (string, error) {
	vals := uritemplate.Values{}
	for k, v := range chosen {
		vals.Set(k, uritemplate.String(bytesAsRunes(v)))
	}
	return t.Expand(vals)
}

// bytesAsRunes makes each byte of s past ASCII a rune of its own value.
// uritemplate (v3.0.2) percent-encodes a character as the bytes of its
// code point (é, U+00E9, as %E9), where RFC 6570 §1.6 and the editors
// encode its UTF-8 bytes (%C3%A9): given the UTF-8 bytes one rune each,
// it writes exactly those. ASCII is left as it is, so which characters
// each operator keeps is still the library's.
func bytesAsRunes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < utf8.RuneSelf {
			b.WriteByte(c)
		} else {
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// templateCommand is /template @server:uriTemplate.
func (u *ui) templateCommand(arg string) {
	const use = "/template @server:uriTemplate (one /resources lists as a template)"
	server, tmpl, ok := strings.Cut(strings.TrimPrefix(arg, "@"), ":")
	if !ok || server == "" || tmpl == "" || strings.ContainsAny(arg, " \t") {
		u.usage(use)
		return
	}
	if !u.o.Interactive {
		u.usage("/template asks for values: it needs a terminal")
		return
	}
	if u.resServers == nil || !u.resServers[server] {
		u.loadResources(true)
	}
	if !u.resServers[server] {
		u.usage(fmt.Sprintf("%q is no connected MCP server with resources (see /resources)", server))
		return
	}
	t, err := uritemplate.New(tmpl)
	if err != nil {
		u.usage("not a URI template: " + err.Error())
		return
	}
	names := t.Varnames()
	if len(names) == 0 {
		// A template without variables is its own URI.
		u.attachNext(server, tmpl)
		return
	}
	u.templates++
	u.asks = append(u.asks, &templateAsk{
		key: fmt.Sprintf("chat-template-%d", u.templates), server: server, template: tmpl,
		names: names, tmpl: t, chosen: map[string]string{}, call: u.callWithin(completeTimeout),
	})
}

// attachNext keeps a resource for the next question.
func (u *ui) attachNext(server, uri string) {
	for _, p := range u.attach {
		if p.Server == server && p.URI == uri {
			return
		}
	}
	u.attach = append(u.attach, rpc.InputPart{Type: "resource", Server: server, URI: uri})
	u.scr.line(u.scr.dim("attached to your next question: @" + cleanLine(server) + ":" + cleanLine(uri)))
}

// templateQuestion is one variable being asked, for completion.
type templateQuestion struct {
	server, template, name string
	chosen                 map[string]string
	call                   func(method string, params, out any) error
}

// values are the server's values for what is typed (kin's
// completion/complete, with the values chosen before), and whether it has
// more than those.
func (q *templateQuestion) values(typed string) ([]string, bool, error) {
	p := rpc.CompletionCompleteParams{
		Server:   q.server,
		Ref:      rpc.CompletionRef{Type: "ref/resource", URI: q.template},
		Argument: rpc.CompletionArgument{Name: q.name, Value: typed},
	}
	if len(q.chosen) > 0 {
		p.Context = &rpc.CompletionContext{Arguments: q.chosen}
	}
	var res rpc.CompletionCompleteResult
	if err := q.call(rpc.MethodCompletionComplete, p, &res); err != nil {
		return nil, false, err
	}
	var out []string
	for _, v := range res.Completion.Values {
		if v != "" {
			out = append(out, v)
		}
	}
	return out, res.Completion.HasMore || res.Completion.Total > len(out), nil
}

// setQuestion makes Tab complete a template's variable (nil: no more).
func (c *completer) setQuestion(q *templateQuestion) {
	c.mu.Lock()
	c.question = q
	c.mu.Unlock()
}

// questionWords are the endings of the server's values that start with
// what is typed (the whole line is the value). A value the server matched
// some other way (not by its start) cannot be an ending of the line, and
// is not offered.
func (c *completer) questionWords(q *templateQuestion, typed string) [][]rune {
	vals, _, err := q.values(typed)
	if err != nil {
		return nil
	}
	var out [][]rune
	for _, v := range vals {
		if rest, ok := strings.CutPrefix(v, typed); ok {
			out = append(out, []rune(rest))
		}
	}
	return out
}

// callWithin is a request bounded by d (completion asked while a key
// waits).
func (u *ui) callWithin(d time.Duration) func(method string, params, out any) error {
	return func(method string, params, out any) error {
		ctx, cancel := context.WithTimeout(u.ctx, d)
		defer cancel()
		return u.conn.Call(ctx, method, params, out)
	}
}
