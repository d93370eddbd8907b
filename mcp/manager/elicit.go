package manager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp/syntax"
	"sort"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/connect"
)

var declined = &mcp.ElicitResult{Action: "decline"}

// elicit relays a server's question to the person. A form outside the MCP
// elicitation schema (see fields) is declined without asking; an answer
// that does not fit the form is declined as a whole (nothing partial is
// sent).
func (s *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	if p == nil {
		return declined, nil
	}
	return s.ask(ctx, nil, p), nil
}

// elicitComplete passes on a server's word that a URL-mode elicitation
// finished (notifications/elicitation/complete) to a Host that takes it.
func (s *server) elicitComplete(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	if req.Params == nil || req.Params.ElicitationID == "" {
		return
	}
	if h, ok := s.m.host.(ElicitCompleter); ok {
		h.ElicitComplete(s.cfg.Name, req.Params.ElicitationID)
	}
}

// ask puts one elicitation to the person: a legacy elicitation/create
// (call is nil: it is attributed to the call in flight, when there is just
// one), or an input request of a 2026-07-28 input-required result of call.
// It stops asking (the form is closed, with the reason) when what asked is
// gone: see askContext.
func (s *server) ask(ctx context.Context, call *tool.Env, p *mcp.ElicitParams) *mcp.ElicitResult {
	// A server may send questions as fast as it can write them, each a
	// form or link the person must answer or dismiss in turn: past
	// MaxOpenQuestions open at once, one is declined without asking (a
	// notice says so, once per flood).
	if n := s.asking.Add(1); n > MaxOpenQuestions {
		s.asking.Add(-1)
		if !s.floodTold.Swap(true) {
			s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s asked more than %d questions at once; the others were declined without asking", s.disp.Name, MaxOpenQuestions))
		}
		return declined
	}
	defer func() {
		if s.asking.Add(-1) == 0 {
			s.floodTold.Store(false)
		}
	}()
	// Redacted before it is cut: a secret cut in two no longer matches.
	r := ElicitRequest{Server: s.cfg.Name, Mode: p.Mode, Message: catalog.Cap(catalog.Strip(s.Redact(p.Message)), MaxQuestionText), ElicitationID: p.ElicitationID}
	if call != nil {
		r.SessionID, r.TurnID, r.CallID = call.SessionID, call.TurnID, call.CallID
	}
	ctx, done := s.askContext(ctx, call, &r)
	defer done()
	switch p.Mode {
	case "url":
		why := linkProblem(p.URL)
		if why == "" && s.Redact(p.URL) != p.URL {
			why = "the address holds a secret of the server"
		}
		if why != "" {
			s.m.host.Notice(LevelWarning, fmt.Sprintf("MCP server %s asked you to open an address kin does not pass on (%s); it was declined without asking", s.disp.Name, why))
			return declined
		}
		r.URL = p.URL
	case "", "form":
		r.Mode = "form"
		fields, why := formFields(p.RequestedSchema, s.propertyOrder(), s.Redact)
		if why != "" {
			s.m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s asked for input with a form kin cannot show (%s); it was declined without asking", s.disp.Name, why))
			return declined
		}
		r.Fields = fields
	default:
		return declined
	}
	res, err := s.m.host.Elicit(ctx, r)
	if err != nil {
		return declined
	}
	switch res.Action {
	case "accept":
		if r.Mode == "url" {
			return &mcp.ElicitResult{Action: "accept"}
		}
		content, err := ask.Check(r.Fields, res.Content)
		if err != nil {
			return declined
		}
		return &mcp.ElicitResult{Action: "accept", Content: ask.WithDefaults(r.Fields, content)}
	case "cancel":
		return &mcp.ElicitResult{Action: "cancel"}
	}
	return declined
}

// MaxQuestionText caps a question's message (bytes), which the person
// reads and the session log keeps; MaxFormFields and MaxChoices bound a
// form: one with more is declined without asking.
const (
	MaxQuestionText = 4 << 10
	MaxFormFields   = 64
	MaxChoices      = 1000
)

// MaxOpenQuestions is the most questions of one server open before the
// person at once (parallel calls of one server may each ask one).
const MaxOpenQuestions = 8

// linkProblem says why a URL-mode question's address is not put to the
// person ("" when it may be): the editors hand it to the system's opener
// (VS Code's openExternal, xdg-open, open), which runs far more than a web
// page for other schemes (file: opens or launches a local file, vscode: and
// command: reach editor extensions, javascript: runs script), so only a web
// page is asked about: https, or plain http to this machine (connect.CheckURL,
// the rule for a server's own URL). An address with a user part
// (https://bank.example@evil.example) or characters that hide or reorder
// text would show the person another site than the one it opens, and so
// would a site name outside ASCII (a look-alike: аpple.com).
func linkProblem(raw string) string {
	if err := connect.CheckURL(raw); err != nil {
		return err.Error()
	}
	if u, err := url.Parse(raw); err != nil || u.User != nil {
		return "the address has a user part, which would make it read as another site"
	}
	if catalog.Strip(raw) != raw || strings.ContainsAny(raw, " \t\n") {
		return "the address has invisible or control characters"
	}
	if u, _ := url.Parse(raw); !asciiHost(u.Hostname()) {
		return "the site's name has letters outside ASCII, which can look like another site's (аpple.com with a Cyrillic а)"
	}
	return ""
}

// asciiHost says whether a host name is plain ASCII (letters that look
// alike across scripts cannot be told apart by the person; a site that
// has such a name is asked about by its xn-- form).
func asciiHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if h[i] >= utf8.RuneSelf || h[i] < ' ' {
			return false
		}
	}
	return true
}

// askContext is the context a question waits on. It ends, with the reason
// the form is closed with (an *ask.Ended cause), when what asked is gone:
//   - the server went away (stopped, or its connection was lost);
//   - for an input request of a call (call set): ctx, the call's turn;
//   - for a legacy elicitation/create: the server cancelled it (ctx, the
//     SDK's, ends plainly), or every call in flight when it came has ended.
//
// The clocks of those calls stop meanwhile (ask.Hold): the person's time is
// not the server's (an input request is asked between rounds, when no clock
// runs). A legacy question is attributed to the call in flight when there
// is exactly one. done releases it all.
func (s *server) askContext(ctx context.Context, call *tool.Env, r *ElicitRequest) (_ context.Context, done func()) {
	var release []func()
	actx, cancel := context.WithCancelCause(ctx)
	if call == nil {
		actx, cancel = context.WithCancelCause(context.WithoutCancel(ctx))
		calls := s.inflightCalls()
		stop := context.AfterFunc(ctx, func() {
			cause := sdkEnd(ctx)
			if errors.Is(cause, context.Canceled) && len(calls) > 0 {
				// A call's answer closes the stream its question came on a
				// moment before the call is seen to end: give the call that
				// moment, so the form is closed as call_ended, not as if the
				// server had withdrawn it (the first cause wins).
				t := time.NewTimer(callEndGrace)
				defer t.Stop()
				select {
				case <-actx.Done():
				case <-t.C:
				}
			}
			cancel(cause)
		})
		release = append(release, func() { stop() })
		attribute(r, calls)
		release = append(release, holdCalls(calls))
		var left atomic.Int32
		left.Store(int32(len(calls)))
		for _, c := range calls {
			stop := context.AfterFunc(c.end, func() {
				if left.Add(-1) == 0 {
					cancel(context.Cause(c.end))
				}
			})
			release = append(release, func() { stop() })
		}
	}
	// Stopping the server ends its life before it closes the connection
	// (whose close waits for this question's handler); a lost connection
	// ends the connection.
	life, conn := s.lifeAndConn()
	var gone <-chan struct{}
	if conn != nil {
		gone = conn.Done()
	}
	go func() {
		select {
		case <-life.Done():
		case <-gone:
		case <-actx.Done():
			return
		}
		cancel(&ask.Ended{Reason: ask.ReasonServerGone})
	}()
	return actx, func() {
		for _, f := range release {
			f()
		}
		cancel(nil)
	}
}

// attribute names the call in flight in r, when there is just one.
func attribute(r *ElicitRequest, calls []*inflight) {
	if len(calls) == 1 {
		e := calls[0].env
		r.SessionID, r.TurnID, r.CallID = e.SessionID, e.TurnID, e.CallID
	}
}

// holdCalls stops the clocks of calls (ask.Hold) until release: the person
// answers a question that came during them, and which of them it is for
// cannot be told when there are several.
func holdCalls(calls []*inflight) (release func()) {
	resumes := make([]func(), len(calls))
	for i, c := range calls {
		resumes[i] = ask.Hold(c.ctx)
	}
	return func() {
		for _, f := range resumes {
			f()
		}
	}
}

// propertyOrder is the live connection's record of its forms' property
// order (nil without one).
func (s *server) propertyOrder() *connect.PropertyOrder {
	if c := s.liveConn(); c != nil {
		return c.Order
	}
	return nil
}

// liveConn is the server's connection, nil when it has none.
func (s *server) liveConn() *connect.Conn {
	_, c := s.lifeAndConn()
	return c
}

// lifeAndConn are the server's lifetime (ended by stop; never nil) and its
// connection (nil when it has none).
func (s *server) lifeAndConn() (context.Context, *connect.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	life := s.life
	if life == nil {
		life = context.Background()
	}
	return life, s.conn
}

// callEndGrace is how long a question whose request the SDK ended plainly
// waits for the calls in flight to be seen ending (askContext).
const callEndGrace = 250 * time.Millisecond

// sdkEnd is why the SDK ended an elicitation/create's context: the server
// cancelled the request (a plain cancel), or the connection failed (its
// read or write error is the cause).
func sdkEnd(ctx context.Context) error {
	if c := context.Cause(ctx); errors.Is(c, context.Canceled) {
		return c
	}
	return &ask.Ended{Reason: ask.ReasonServerGone}
}

// propSchema is a property of a requested schema: the keywords of the MCP
// elicitation schema (spec revision 2025-11-25), and those kin refuses.
type propSchema struct {
	Type        string            `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Default     json.RawMessage   `json:"default"`
	Enum        []json.RawMessage `json:"enum"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []titled          `json:"oneOf"`
	Minimum     *float64          `json:"minimum"`
	Maximum     *float64          `json:"maximum"`
	MinLength   *int              `json:"minLength"`
	MaxLength   *int              `json:"maxLength"`
	Format      string            `json:"format"`
	Pattern     string            `json:"pattern"`
	Items       *itemsSchema      `json:"items"`
	MinItems    *int              `json:"minItems"`
	MaxItems    *int              `json:"maxItems"`
}

// titled is one titled option: {"const": "hero-1", "title": "Superman"}.
type titled struct {
	Const *string `json:"const"`
	Title string  `json:"title"`
}

// itemsSchema is a multi-select's items: {"type": "string", "enum": [...]}
// or {"anyOf": [{"const", "title"}...]}.
type itemsSchema struct {
	Type  string            `json:"type"`
	Enum  []json.RawMessage `json:"enum"`
	AnyOf []titled          `json:"anyOf"`
}

// refused are JSON Schema keywords that constrain an answer beyond the MCP
// elicitation schema: a form using one is declined, because kin could
// neither show nor check the rule. Annotations (examples, $comment, ...)
// are ignored.
var refused = []string{"$ref", "properties", "patternProperties", "additionalProperties", "allOf", "anyOf", "not",
	"if", "then", "else", "const", "multipleOf", "exclusiveMinimum", "exclusiveMaximum", "contains",
	"prefixItems", "minProperties", "maxProperties", "dependentRequired", "dependentSchemas"}

var formats = map[string]bool{ask.FormatEmail: true, ask.FormatURI: true, ask.FormatDate: true, ask.FormatDateTime: true}

// formFields turns a requested schema into fields, one per property, in
// the order the server wrote them (order: the SDK's schema is a map, which
// has none), or by name when that order is unknown. why says, for a schema
// outside the MCP elicitation schema, what kin cannot show. redact hides
// the server's own secrets (its headers, env, sign-in) in what is shown,
// before any cut; a value that would be sent back (a field's name, a
// choice, a default) holding one declines the form.
func formFields(schema any, order *connect.PropertyOrder, redact func(string) string) (fields []ask.Field, why string) {
	if schema == nil {
		return nil, ""
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, "unreadable schema"
	}
	var root struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(b, &root) != nil || (root.Type != "" && root.Type != "object") {
		return nil, "not an object schema"
	}
	if len(root.Properties) > MaxFormFields {
		return nil, fmt.Sprintf("%d fields, more than %d", len(root.Properties), MaxFormFields)
	}
	required := map[string]bool{}
	for _, n := range root.Required {
		required[n] = true
	}
	names := make([]string, 0, len(root.Properties))
	for n := range root.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	if written := order.Order(names); len(written) == len(names) {
		names = written
	}
	for _, n := range names {
		if redact(n) != n {
			return nil, "a field named with a secret"
		}
		// The name is sent back as the answer's key, so it cannot be
		// cleaned: an editor shows it when the field has no title.
		if n == "" || catalog.Label(n) != n {
			return nil, "a field name that is empty, too long, or has invisible characters or line breaks"
		}
		f, why := field(n, root.Properties[n], redact)
		if why != "" {
			return nil, fmt.Sprintf("field %q: %s", catalog.Label(n), why)
		}
		f.Required = required[n]
		fields = append(fields, f)
	}
	return fields, ""
}

func field(name string, raw json.RawMessage, redact func(string) string) (ask.Field, string) {
	var keys map[string]json.RawMessage
	var p propSchema
	if json.Unmarshal(raw, &keys) != nil || json.Unmarshal(raw, &p) != nil {
		return ask.Field{}, "unreadable property"
	}
	if string(p.Default) == "null" {
		p.Default = nil
	}
	for _, k := range refused {
		if _, ok := keys[k]; ok {
			return ask.Field{}, "uses " + k
		}
	}
	if _, ok := keys["oneOf"]; ok && (p.Type != "string" && p.Type != "") {
		return ask.Field{}, "uses oneOf on a " + p.Type
	}
	if _, ok := keys["pattern"]; ok && (p.Type != "string" || len(p.Enum) > 0 || len(p.OneOf) > 0) {
		return ask.Field{}, "uses pattern on something other than text"
	}
	if _, ok := keys["items"]; ok && p.Type != "array" {
		return ask.Field{}, "uses items on a " + p.Type
	}
	if p.Type == "array" && (len(p.Enum) > 0 || len(p.OneOf) > 0) {
		return ask.Field{}, "a list with enum or oneOf outside its items"
	}
	desc, _ := catalog.Sanitize(redact(p.Description))
	f := ask.Field{Name: name, Title: catalog.Label(redact(p.Title)), Description: desc}
	if redact(p.Pattern) != p.Pattern {
		return ask.Field{}, "a secret in its pattern"
	}
	switch {
	case p.Type == "array":
		return multiSelect(f, p, redact)
	case len(p.Enum) > 0 || len(p.OneOf) > 0:
		if p.Type != "" && p.Type != "string" {
			return ask.Field{}, "an enum of " + p.Type
		}
		return singleSelect(f, p, redact)
	case p.Type == "string":
		f.Type, f.MinLength, f.MaxLength = ask.TypeString, p.MinLength, p.MaxLength
		if p.Format != "" && !formats[p.Format] {
			return ask.Field{}, "format " + catalog.Label(p.Format)
		}
		f.Format = p.Format
		if p.Pattern != "" {
			if _, err := ask.CompilePattern(p.Pattern); err != nil {
				return ask.Field{}, "a pattern kin cannot check"
			}
			f.Pattern = p.Pattern
			f.PatternKinOnly = len(p.Pattern) > maxPattern || backtracks(p.Pattern)
		}
		d, ok := setDefault[string](&f, p.Default)
		if !ok {
			return ask.Field{}, "a default that is not text"
		}
		if redact(d) != d {
			return ask.Field{}, "a default that holds a secret"
		}
	case p.Type == "number", p.Type == "integer":
		f.Type, f.Minimum, f.Maximum = ask.FieldType(p.Type), p.Minimum, p.Maximum
		if _, ok := setDefault[float64](&f, p.Default); !ok {
			return ask.Field{}, "a default that is not a number"
		}
	case p.Type == "boolean":
		f.Type = ask.TypeBoolean
		if _, ok := setDefault[bool](&f, p.Default); !ok {
			return ask.Field{}, "a default that is not true or false"
		}
	case p.Type == "":
		return ask.Field{}, "no type"
	default:
		return ask.Field{}, "type " + catalog.Label(p.Type)
	}
	return f, ""
}

// maxPattern is the longest pattern the editors are given to check as the
// person types (bytes); kin checks a longer one alone.
const maxPattern = 512

// backtracks says whether a pattern repeats something that itself repeats
// or has alternatives ((a+)+, (\w+\s?)*, (ab|a)*): kin checks it with
// RE2, in linear time, but the editors check it as the person types with
// a backtracking engine (JavaScript's RegExp in VS Code, Vim's), where
// such a pattern takes exponential time on a line that almost matches and
// freezes the editor (every extension, in VS Code). Such a pattern is
// checked by kin alone (ask.Field.PatternKinOnly): the form is still asked,
// and an answer that does not match is refused naming the field.
func backtracks(pattern string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(re *syntax.Regexp, inRepeat bool) bool
	walk = func(re *syntax.Regexp, inRepeat bool) bool {
		repeats := re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpRepeat && (re.Max == -1 || re.Max > 1)
		if inRepeat && (repeats || re.Op == syntax.OpAlternate || re.Op == syntax.OpQuest) {
			return true
		}
		for _, sub := range re.Sub {
			if walk(sub, inRepeat || repeats) {
				return true
			}
		}
		return false
	}
	return walk(re, false)
}

// singleSelect reads an enum: untitled (enum), legacy titled (enum with
// enumNames) or titled (oneOf of const and title).
func singleSelect(f ask.Field, p propSchema, redact func(string) string) (ask.Field, string) {
	f.Type = ask.TypeEnum
	var why string
	switch {
	case len(p.Enum) > 0 && len(p.OneOf) > 0:
		return ask.Field{}, "both enum and oneOf"
	case len(p.Enum) > 0:
		f.Choices, why = untitledChoices(p.Enum, redact)
		if why == "" && len(p.EnumNames) > 0 {
			if len(p.EnumNames) != len(f.Choices) {
				return ask.Field{}, "enumNames of another length than enum"
			}
			for i := range f.Choices {
				f.Choices[i].Title = catalog.Label(redact(p.EnumNames[i]))
			}
		}
	default:
		f.Choices, why = titledChoices(p.OneOf, redact)
	}
	if why != "" {
		return ask.Field{}, why
	}
	if d, ok := setDefault[string](&f, p.Default); !ok || (p.Default != nil && !hasChoice(f.Choices, d)) {
		return ask.Field{}, "a default that is not one of the choices"
	}
	return f, ""
}

// multiSelect reads a list of choices: items of enum (untitled) or of
// anyOf const and title (titled), minItems and maxItems.
func multiSelect(f ask.Field, p propSchema, redact func(string) string) (ask.Field, string) {
	f.Type, f.MinItems, f.MaxItems = ask.TypeMultiSelect, p.MinItems, p.MaxItems
	it := p.Items
	var why string
	switch {
	case it == nil:
		return ask.Field{}, "a list without items"
	case it.Type != "" && it.Type != "string":
		return ask.Field{}, "a list of " + catalog.Label(it.Type)
	case len(it.Enum) > 0 && len(it.AnyOf) == 0:
		f.Choices, why = untitledChoices(it.Enum, redact)
	case len(it.AnyOf) > 0 && len(it.Enum) == 0:
		f.Choices, why = titledChoices(it.AnyOf, redact)
	default:
		return ask.Field{}, "a list that is not of choices"
	}
	if why != "" {
		return ask.Field{}, why
	}
	if (f.MinItems != nil && *f.MinItems < 0) || (f.MaxItems != nil && f.MinItems != nil && *f.MaxItems < *f.MinItems) {
		return ask.Field{}, "impossible minItems and maxItems"
	}
	d, ok := setDefault[[]string](&f, p.Default)
	if !ok {
		return ask.Field{}, "a default that is not a list of choices"
	}
	for _, v := range d {
		if !hasChoice(f.Choices, v) {
			return ask.Field{}, "a default that is not a list of choices"
		}
	}
	return f, ""
}

func untitledChoices(raws []json.RawMessage, redact func(string) string) ([]ask.Choice, string) {
	if len(raws) > MaxChoices {
		return nil, fmt.Sprintf("%d choices, more than %d", len(raws), MaxChoices)
	}
	var out []ask.Choice
	for _, raw := range raws {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, "a choice that is not text"
		}
		if why := choiceValue(v, out, redact); why != "" {
			return nil, why
		}
		out = append(out, ask.Choice{Value: v})
	}
	return out, ""
}

func titledChoices(ts []titled, redact func(string) string) ([]ask.Choice, string) {
	if len(ts) > MaxChoices {
		return nil, fmt.Sprintf("%d choices, more than %d", len(ts), MaxChoices)
	}
	var out []ask.Choice
	for _, t := range ts {
		if t.Const == nil {
			return nil, "a titled choice without const"
		}
		if why := choiceValue(*t.Const, out, redact); why != "" {
			return nil, why
		}
		out = append(out, ask.Choice{Value: *t.Const, Title: catalog.Label(redact(t.Title))})
	}
	return out, ""
}

// choiceValue refuses a value that would be sent back other than it is
// shown: with invisible characters, empty, or twice; or one holding a
// secret of the server (shown, it would leak).
func choiceValue(v string, seen []ask.Choice, redact func(string) string) string {
	switch {
	case redact(v) != v:
		return "a choice that holds a secret"
	case v == "":
		return "an empty choice"
	case catalog.Strip(v) != v:
		return "a choice with invisible characters"
	case hasChoice(seen, v):
		return "a choice listed twice"
	}
	return ""
}

func hasChoice(cs []ask.Choice, v string) bool {
	for _, c := range cs {
		if c.Value == v {
			return true
		}
	}
	return false
}

// setDefault decodes a property's default as a T and makes it f's
// default. An absent default (raw nil) is fine and leaves f's unset; ok is
// false for one that is not a T.
func setDefault[T any](f *ask.Field, raw json.RawMessage) (d T, ok bool) {
	if raw == nil {
		return d, true
	}
	if json.Unmarshal(raw, &d) != nil {
		return d, false
	}
	f.Default = d
	return d, true
}
