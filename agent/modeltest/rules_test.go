package modeltest_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/kin-dev/kin/agent/modeltest"
)

func optionsWithRetries(srv *modeltest.Server, n int) []option.RequestOption {
	return []option.RequestOption{option.WithBaseURL(srv.URL()), option.WithAPIKey("test"), option.WithMaxRetries(n)}
}

const rulesJSON = `[
  {"whenUser": "list files", "reply": {"text": "Let me look.", "calls": [{"id": "call_ls", "name": "list_dir", "arguments": {"path": "."}}]}},
  {"whenToolOutput": "a.go", "reply": {"text": ["Found ", "a.go."]}},
  {"afterTool": true, "reply": {"text": "Some tool ran."}},
  {"whenUser": "rate limit", "reply": {"httpStatus": 429, "errorMessage": "slow down"}}
]`

func TestRules(t *testing.T) {
	srv, client := start(t)
	rules, err := modeltest.ParseRules([]byte(rulesJSON))
	if err != nil {
		t.Fatal(err)
	}
	srv.SetRules(rules)
	ctx := ctxTimeout(t)

	r := collect(client.Responses.NewStreaming(ctx, userParams("please list files here")))
	if r.err != nil || r.text != "Let me look." {
		t.Fatalf("user rule: text %q err %v", r.text, r.err)
	}
	call := r.completed.Output[1].AsFunctionCall()
	if call.CallID != "call_ls" || call.Name != "list_dir" || call.Arguments != `{"path":"."}` {
		t.Errorf("call %s", call.RawJSON())
	}

	r = collect(client.Responses.NewStreaming(ctx, toolOutputParams("please list files here", "call_ls", "a.go\nb.go")))
	if r.err != nil || r.text != "Found a.go." {
		t.Errorf("tool-output rule: text %q err %v", r.text, r.err)
	}
	r = collect(client.Responses.NewStreaming(ctx, toolOutputParams("please list files here", "call_ls", "nothing")))
	if r.text != "Some tool ran." {
		t.Errorf("afterTool rule: text %q err %v", r.text, r.err)
	}
	r = collect(client.Responses.NewStreaming(ctx, userParams("something else")))
	if r.err != nil || r.text != "mock: no rule for something else" {
		t.Errorf("no rule: text %q err %v", r.text, r.err)
	}
	if r = collect(client.Responses.NewStreaming(ctx, userParams("hit the rate limit"))); r.err == nil {
		t.Error("httpStatus rule gave no error")
	}

	// Scripted replies take precedence over rules.
	srv.Script(modeltest.Reply{Text: []string{"scripted"}})
	if r = collect(client.Responses.NewStreaming(ctx, userParams("please list files"))); r.text != "scripted" {
		t.Errorf("script precedence: text %q", r.text)
	}
}

// TestRuleByAuthorization: a rule can ask for the key the request carried,
// so a test tells which key reached the service.
func TestRuleByAuthorization(t *testing.T) {
	srv, client := start(t)
	rules, err := modeltest.ParseRules([]byte(`[
  {"whenUser": "which key", "whenAuthorization": "Bearer second", "reply": {"text": "second key"}},
  {"whenUser": "which key", "reply": {"text": "another key"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	srv.SetRules(rules)
	ctx := ctxTimeout(t)
	if r := collect(client.Responses.NewStreaming(ctx, userParams("which key"))); r.text != "another key" {
		t.Errorf("with the key test: %q %v", r.text, r.err)
	}
	if r := collect(client.Responses.NewStreaming(ctx, userParams("which key"), option.WithAPIKey("second"))); r.text != "second key" {
		t.Errorf("with the key second: %q %v", r.text, r.err)
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(path, []byte(`{"rules": [{"whenUser": "hi", "reply": {"text": "Hello there!", "delayMs": 5, "dropAfter": 3}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rules, err := modeltest.LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := rules[0].Reply.Reply()
	if len(rules) != 1 || !slices.Equal(rep.Text, []string{"Hell", "o th", "ere!"}) || rep.Delay.Milliseconds() != 5 || rep.DropAfter != 3 {
		t.Errorf("rules %+v reply %+v", rules, rep)
	}

	for _, bad := range []string{
		`[{"whenUsr": "typo", "reply": {}}]`,
		`[{"reply": {"calls": [{"arguments": "{}"}]}}]`,
		`[{"reply": {"httpStatus": 1000}}]`,
		`[{"reply": {"text": 5}}]`,
	} {
		if _, err := modeltest.ParseRules([]byte(bad)); err == nil {
			t.Errorf("ParseRules(%s) accepted", bad)
		}
	}
	if rules, err := modeltest.ParseRules([]byte(`[]`)); err != nil || rules == nil {
		t.Errorf("empty rules: %v %v", rules, err)
	}
}
