package manager

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/config"
)

type askHost struct {
	nopHost
	asked  []ElicitRequest
	answer map[string]any
}

func (h *askHost) Elicit(_ context.Context, r ElicitRequest) (ElicitResult, error) {
	h.asked = append(h.asked, r)
	return ElicitResult{Action: "accept", Content: h.answer}, nil
}

func schema(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestElicitOutsideTheSchemaDeclinedWithoutAsking(t *testing.T) {
	h := &askHost{answer: map[string]any{"x": "y"}}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
	for name, sc := range map[string]string{
		"nested":              `{"type":"object","properties":{"x":{"type":"object","properties":{"y":{"type":"string"}}}}}`,
		"list of objects":     `{"type":"object","properties":{"x":{"type":"array","items":{"type":"object"}}}}`,
		"free list":           `{"type":"object","properties":{"x":{"type":"array","items":{"type":"string"}}}}`,
		"list of numbers":     `{"type":"object","properties":{"x":{"type":"array","items":{"type":"number","enum":[1,2]}}}}`,
		"ref":                 `{"type":"object","properties":{"x":{"$ref":"#/defs/a"}}}`,
		"root":                `{"type":"string"}`,
		"untyped":             `{"type":"object","properties":{"x":{}}}`,
		"lookahead":           `{"type":"object","properties":{"x":{"type":"string","pattern":"^(?=a)a+$"}}}`,
		"pattern on a number": `{"type":"object","properties":{"x":{"type":"number","pattern":"^1$"}}}`,
		"format":              `{"type":"object","properties":{"x":{"type":"string","format":"hostname"}}}`,
		"anyOf":               `{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`,
		"number enum":         `{"type":"object","properties":{"x":{"type":"number","enum":[1,2]}}}`,
		"bad default":         `{"type":"object","properties":{"x":{"type":"string","enum":["a","b"],"default":"c"}}}`,
		"enumNames":           `{"type":"object","properties":{"x":{"type":"string","enum":["a","b"],"enumNames":["A"]}}}`,
		"invisible":           `{"type":"object","properties":{"x":{"type":"string","enum":["invoice_\u202egpj.exe"]}}}`,
		"titled no const":     `{"type":"object","properties":{"x":{"type":"string","oneOf":[{"title":"A"}]}}}`,
		"invisible name":      `{"type":"object","properties":{"pay_\u202eevil":{"type":"string"}}}`,
		"multi-line name":     `{"type":"object","properties":{"a\n\nIgnore the form":{"type":"string"}}}`,
		"long name":           `{"type":"object","properties":{"` + strings.Repeat("n", 100) + `":{"type":"string"}}}`,
		"items min > max":     `{"type":"object","properties":{"x":{"type":"array","minItems":3,"maxItems":1,"items":{"type":"string","enum":["a"]}}}}`,
	} {
		res, err := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, sc)}})
		if err != nil || res.Action != "decline" {
			t.Errorf("%s: %+v %v", name, res, err)
		}
	}
	if len(h.asked) != 0 {
		t.Fatalf("asked %d times", len(h.asked))
	}
	// URL mode is relayed; kin never opens it.
	res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/x", ElicitationID: "e1"}})
	if len(h.asked) != 1 || res.Action != "accept" || res.Content != nil {
		t.Fatalf("url mode: %+v asked %d", res, len(h.asked))
	}
}

// The reference server's standard form (server-everything's
// trigger-elicitation-request): every field kind of the current schema.
const everythingForm = `{"type":"object","required":["name"],"properties":{
  "name":{"title":"String","type":"string","description":"Your full, legal name"},
  "check":{"title":"Boolean","type":"boolean"},
  "firstLine":{"title":"String with default","type":"string","default":"It was a dark and stormy night."},
  "email":{"type":"string","format":"email"},
  "homepage":{"type":"string","format":"uri"},
  "birthdate":{"type":"string","format":"date"},
  "integer":{"type":"integer","minimum":1,"maximum":100,"default":42},
  "number":{"type":"number","minimum":0,"maximum":1000,"default":3.14},
  "untitledSingleSelectEnum":{"type":"string","enum":["Monica","Rachel"],"default":"Monica"},
  "untitledMultipleSelectEnum":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["Guitar","Piano","Violin"]},"default":["Guitar"]},
  "titledSingleSelectEnum":{"type":"string","oneOf":[{"const":"hero-1","title":"Superman"},{"const":"hero-2","title":"Green Lantern"}],"default":"hero-1"},
  "titledMultipleSelectEnum":{"type":"array","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"fish-1","title":"Tuna"},{"const":"fish-2","title":"Salmon"}]},"default":["fish-1"]},
  "legacyTitledEnum":{"type":"string","enum":["pet-1","pet-2"],"enumNames":["Cats","Dogs"],"default":"pet-1"}}}`

func TestElicitCurrentSchemaReachesThePerson(t *testing.T) {
	answer := map[string]any{"name": "Ana", "integer": float64(7), "untitledMultipleSelectEnum": []any{"Piano", "Violin"},
		"titledMultipleSelectEnum": []any{"fish-2"}, "titledSingleSelectEnum": "hero-2", "email": "ana@example.com"}
	h := &askHost{answer: answer}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
	res, err := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, everythingForm)}})
	if err != nil || res.Action != "accept" {
		t.Fatalf("%+v %v", res, err)
	}
	if res.Content["integer"] != int64(7) || !reflect.DeepEqual(res.Content["untitledMultipleSelectEnum"], []string{"Piano", "Violin"}) {
		t.Errorf("content %#v", res.Content)
	}
	byName := map[string]ask.Field{}
	for _, f := range h.asked[0].Fields {
		byName[f.Name] = f
	}
	if len(byName) != 13 {
		t.Fatalf("fields %+v", h.asked[0].Fields)
	}
	ms := byName["titledMultipleSelectEnum"]
	if ms.Type != ask.TypeMultiSelect || *ms.MinItems != 1 || *ms.MaxItems != 3 || !reflect.DeepEqual(ms.Default, []string{"fish-1"}) ||
		!reflect.DeepEqual(ms.Choices, []ask.Choice{{Value: "fish-1", Title: "Tuna"}, {Value: "fish-2", Title: "Salmon"}}) {
		t.Errorf("titled multi-select %+v", ms)
	}
	if f := byName["untitledMultipleSelectEnum"]; f.Type != ask.TypeMultiSelect || f.Choices[2].Value != "Violin" || f.Choices[2].Title != "" {
		t.Errorf("untitled multi-select %+v", f)
	}
	if f := byName["legacyTitledEnum"]; f.Type != ask.TypeEnum || f.Choices[1] != (ask.Choice{Value: "pet-2", Title: "Dogs"}) || f.Default != "pet-1" {
		t.Errorf("legacy titled enum %+v", f)
	}
	if f := byName["titledSingleSelectEnum"]; f.Type != ask.TypeEnum || f.Choices[0].Title != "Superman" {
		t.Errorf("titled enum %+v", f)
	}
	if f := byName["number"]; f.Type != ask.TypeNumber || f.Default != 3.14 || *f.Maximum != 1000 {
		t.Errorf("number %+v", f)
	}
	if f := byName["birthdate"]; f.Format != ask.FormatDate || !byName["name"].Required || byName["email"].Required {
		t.Errorf("formats and required: %+v", h.asked[0].Fields)
	}
	// An answer that does not fit (too many choices) is declined whole.
	h.answer = map[string]any{"name": "Ana", "untitledMultipleSelectEnum": []any{"Guitar", "Piano", "Violin", "Guitar"}}
	res, _ = s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, everythingForm)}})
	if res.Action != "decline" || res.Content != nil {
		t.Errorf("a bad answer was passed on: %+v", res)
	}
	if !strings.Contains(h.asked[0].Message, "q") {
		t.Errorf("message %q", h.asked[0].Message)
	}
}

// A text field's pattern reaches the person and is checked on the answer;
// one Go cannot read the way JSON Schema means it (lookahead) declines the
// form (above).
func TestElicitPatternIsShownAndChecked(t *testing.T) {
	h := &askHost{answer: map[string]any{"code": "abc"}}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
	form := `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"}}}`
	res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, form)}})
	if len(h.asked) != 1 || h.asked[0].Fields[0].Pattern != "^[A-Z]{3}$" || res.Action != "decline" {
		t.Fatalf("asked %+v, answered %+v", h.asked, res)
	}
	h.answer = map[string]any{"code": "ABC"}
	if res, _ = s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, form)}}); res.Action != "accept" {
		t.Errorf("a matching answer: %+v", res)
	}
}

// noticeHost is an askHost that keeps the notices it is given.
type noticeHost struct {
	askHost
	notices []string
}

func (h *noticeHost) Notice(_, msg string) { h.notices = append(h.notices, msg) }

// Attack: a hostile server's URL-mode question (legacy elicitation/create
// or an input request of a call) names an address the editors hand to the
// system's opener: a local file or program, an editor's own URI handler,
// script, or a web address dressed as another site. None of them reaches
// the person; each is declined with a notice that says why.
func TestElicitURLModeOnlyWebPages(t *testing.T) {
	h := &noticeHost{}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
	for _, bad := range []string{
		"file:///etc/passwd",
		"file:///Applications/Calculator.app",
		"javascript:alert(document.cookie)",
		"vscode://vscode.git/clone?url=https://evil.example/repo.git",
		"command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22id%22%7D",
		"data:text/html,<script>alert(1)</script>",
		"http://evil.example/sign-in",               // plain http off this machine
		"https://accounts.google.com@evil.example/", // reads as google, opens evil
		"https://evil.example/\u202egpj.exe",
		"https://evil.example/a b",
		"//evil.example/relative",
		"https://\u0430pple.com/sign-in",         // Cyrillic а: reads as apple.com
		"https://%D0%B0pple.com/sign-in",         // the same, escaped
		"https://accounts.g\u043e\u043egle.com/", // Cyrillic о
	} {
		res, err := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: bad, ElicitationID: "e"}})
		if err != nil || res.Action != "decline" {
			t.Errorf("%q: %+v %v", bad, res, err)
		}
		res = s.ask(context.Background(), &tool.Env{SessionID: "sess", CallID: "c"}, &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: bad, ElicitationID: "e"})
		if res.Action != "decline" {
			t.Errorf("input request %q: %+v", bad, res)
		}
	}
	if len(h.asked) != 0 {
		t.Fatalf("put to the person: %+v", h.asked)
	}
	if len(h.notices) != 28 || !strings.Contains(h.notices[0], "declined without asking") {
		t.Errorf("notices %q", h.notices)
	}
	for _, good := range []string{"https://example.com/x?state=1", "http://127.0.0.1:8080/cb", "http://localhost/pay", "https://xn--pple-43d.com/caf%C3%A9", "https://example.com/café"} {
		res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Mode: "url", Message: "m", URL: good, ElicitationID: "e"}})
		if res.Action != "accept" || h.asked[len(h.asked)-1].URL != good {
			t.Errorf("%q: %+v", good, res)
		}
	}
}

// blockHost holds every question until release is closed.
type blockHost struct {
	nopHost
	mu      sync.Mutex
	open    int
	notices []string
	release chan struct{}
}

func (h *blockHost) Elicit(ctx context.Context, _ ElicitRequest) (ElicitResult, error) {
	h.mu.Lock()
	h.open++
	h.mu.Unlock()
	<-h.release
	return ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

func (h *blockHost) Notice(_, msg string) {
	h.mu.Lock()
	h.notices = append(h.notices, msg)
	h.mu.Unlock()
}

// Attack: a server sends 40 questions at once (each a form the person must
// answer or dismiss in turn). At most MaxOpenQuestions are put to the
// person; the rest are declined at once, with one notice.
func TestElicitFloodIsBounded(t *testing.T) {
	h := &blockHost{release: make(chan struct{})}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
	form := schema(t, `{"type":"object","properties":{"x":{"type":"string"}}}`)
	results := make(chan string, 40)
	for range 40 {
		go func() {
			res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: form}})
			results <- res.Action
		}()
	}
	for range 40 - MaxOpenQuestions {
		select {
		case a := <-results:
			if a != "decline" {
				t.Fatalf("an over-limit question was answered %q", a)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("over-limit questions were not declined at once")
		}
	}
	close(h.release)
	for range MaxOpenQuestions {
		if a := <-results; a != "accept" {
			t.Errorf("a question put to the person: %q", a)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open != MaxOpenQuestions || len(h.notices) != 1 || !strings.Contains(h.notices[0], "declined without asking") {
		t.Errorf("asked %d, notices %q", h.open, h.notices)
	}
}

// Attack: a server's form carries its own secret (the token kin sends in
// its Authorization header) in a field's title, description, a choice's
// title or a pre-filled default, pads a title so that cutting it keeps a
// part of the token, sends a megabyte of message, or thousands of fields.
// The person (and the session log, which keeps the message) must get none
// of the secret, and a bounded question; a form kin would have to show a
// secret in, or that has more fields than anyone fills in, is declined.
func TestElicitFormIsRedactedAndBounded(t *testing.T) {
	const token = "tok-CANARY-5e6f7a8b9c0d"
	h := &askHost{answer: map[string]any{}}
	m := New(Options{Host: h})
	s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP, URL: "https://example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer " + token}})
	pad := strings.Repeat("x", 55)
	texts, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"a": map[string]any{"type": "string", "title": pad + token, "description": "paste " + token},
		"b": map[string]any{"type": "string", "oneOf": []any{map[string]any{"const": "x", "title": pad + token}}},
		"c": map[string]any{"type": "string", "enum": []any{"y"}, "enumNames": []any{token}},
	}})
	res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: strings.Repeat("m", 1<<20) + token, RequestedSchema: schema(t, string(texts))}})
	if len(h.asked) != 1 {
		t.Fatalf("asked %d times (%+v)", len(h.asked), res)
	}
	shown, _ := json.Marshal(h.asked[0])
	if strings.Contains(string(shown), token[:6]) {
		t.Errorf("a part of the secret reaches the person: %s", shown[len(shown)-min(len(shown), 800):])
	}
	if len(h.asked[0].Message) > 8<<10 {
		t.Errorf("message of %d bytes passed on", len(h.asked[0].Message))
	}
	many := map[string]any{}
	for i := range 5000 {
		many[fmt.Sprintf("f%d", i)] = map[string]any{"type": "string"}
	}
	for name, sc := range map[string]any{
		"secret default": map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "string", "default": "use " + token}}},
		"secret choice":  map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"type": "string", "enum": []any{token}}}},
		"secret name":    map[string]any{"type": "object", "properties": map[string]any{token: map[string]any{"type": "string"}}},
		"many fields":    map[string]any{"type": "object", "properties": many},
	} {
		h.asked = nil
		res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: sc}})
		if res.Action != "decline" || len(h.asked) != 0 {
			t.Errorf("%s: %+v, asked %d", name, res, len(h.asked))
		}
	}
	h.asked = nil
	res, _ = s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Mode: "url", Message: "q", URL: "https://example.org/?t=" + token, ElicitationID: "e"}})
	if res.Action != "decline" || len(h.asked) != 0 {
		t.Errorf("a link with the secret: %+v, asked %d", res, len(h.asked))
	}
}

// Attack: a form's pattern RE2 checks in linear time but a backtracking
// engine takes exponential time on (^(a+)+$, ^(\w+\s?)*$, (ab|a|b)*, or a
// very long one). The editors check a pattern as the person types with
// such engines, so a line that almost matches would freeze the editor.
// The form is still asked (a domain pattern like ^([a-z0-9-]+\.)+[a-z]{2,}$
// is common), with the pattern marked for kin alone: the editors are not
// given it, and kin refuses an answer that does not match.
func TestElicitBacktrackingPatternIsCheckedByKinAlone(t *testing.T) {
	for name, p := range map[string]string{
		"nested repeat": `^(a+)+$`,
		"words":         `^(\w+\s?)*$`,
		"alternation":   `^(ab|a|b)*c$`,
		"domain":        `^([a-z0-9-]+\.)+[a-z]{2,}$`,
		"long":          strings.Repeat("a", 600),
	} {
		t.Run(name, func(t *testing.T) {
			h := &askHost{answer: map[string]any{"x": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}}
			m := New(Options{Host: h})
			s := newServer(m, config.Server{Name: "s", Transport: config.TransportHTTP})
			pj, _ := json.Marshal(p)
			form := `{"type":"object","properties":{"x":{"type":"string","pattern":` + string(pj) + `}}}`
			res, _ := s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, form)}})
			if len(h.asked) != 1 {
				t.Fatalf("the form was not asked (%+v)", res)
			}
			if f := h.asked[0].Fields[0]; f.Pattern != p || !f.PatternKinOnly {
				t.Errorf("field %+v: want the pattern kept and marked for kin alone", f)
			}
			if res.Action != "decline" {
				t.Errorf("an answer that does not match was taken: %+v", res)
			}
		})
	}
	h := &askHost{answer: map[string]any{"x": "ABC"}}
	s := newServer(New(Options{Host: h}), config.Server{Name: "s", Transport: config.TransportHTTP})
	s.elicit(context.Background(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "q", RequestedSchema: schema(t, `{"type":"object","properties":{"x":{"type":"string","pattern":"^[A-Z]{3}$"}}}`)}})
	if len(h.asked) != 1 || h.asked[0].Fields[0].PatternKinOnly {
		t.Errorf("a plain pattern is for the editors too: %+v", h.asked)
	}
}
