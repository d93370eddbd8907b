package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/hooks"
)

// settingsWith is a settings file with one event's hook entries.
func settingsWith(event string, entries ...map[string]any) string {
	hs := make([]any, len(entries))
	for i, e := range entries {
		hs[i] = e
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{event: []any{map[string]any{"matcher": "", "hooks": hs}}}})
	return string(b)
}

// Prompt, agent and http hooks are read with their fields and defaults;
// entries kin cannot run (no prompt, no url, a URL that is not http, a
// prompt or agent hook at SessionStart) are problems, and skipped.
func TestPromptAndHTTPHooksAreParsed(t *testing.T) {
	kinHome, ws, _ := setup(t)
	write(t, filepath.Join(kinHome, "settings.json"), settingsWith("PreToolUse",
		map[string]any{"type": "prompt", "prompt": "Is $ARGUMENTS safe?", "model": "judge-1", "timeout": 5},
		map[string]any{"type": "http", "url": "https://hooks.example/check?key=SECRETQ", "headers": map[string]any{"Authorization": "Bearer $TOKEN"}, "allowedEnvVars": []any{"TOKEN"}},
		map[string]any{"type": "prompt", "prompt": "  "},
		map[string]any{"type": "http"},
		map[string]any{"type": "http", "url": "ftp://hooks.example/x"},
		map[string]any{"type": "http", "url": "https:///nohost"},
		map[string]any{"type": "agent", "prompt": "verify it reads $ARGUMENTS", "model": "judge-2"},
		map[string]any{"type": "webhook", "url": "https://x"},
		map[string]any{"type": "command", "command": "true"},
		map[string]any{"type": "agent", "prompt": " ", "timeout": 3},
	), 0o600)
	write(t, filepath.Join(ws, ".kin", "hooks.json"), settingsWith("SessionStart",
		map[string]any{"type": "prompt", "prompt": "say hello"}, map[string]any{"type": "agent", "prompt": "check the tree"}), 0o644)
	c := hooks.Load(kinHome, []string{ws})
	if len(c.Hooks) != 4 {
		t.Fatalf("%d hooks, want 4: %+v", len(c.Hooks), c.Hooks)
	}
	p, h, ag, cmd := c.Hooks[0], c.Hooks[1], c.Hooks[2], c.Hooks[3]
	if ag.Type != hooks.TypeAgent || ag.Prompt != "verify it reads $ARGUMENTS" || ag.Model != "judge-2" || ag.Timeout != 60*time.Second {
		t.Errorf("agent hook %+v", ag)
	}
	if d := ag.Detail(); d != "agent: verify it reads $ARGUMENTS (model judge-2)" {
		t.Errorf("agent detail %q", d)
	}
	if d := ag.Display(); d != "PreToolUse: agent: verify it reads $ARGUMENTS" {
		t.Errorf("agent display %q", d)
	}
	if p.Type != hooks.TypePrompt || p.Prompt != "Is $ARGUMENTS safe?" || p.Model != "judge-1" || p.Timeout != 5*time.Second {
		t.Errorf("prompt hook %+v", p)
	}
	if h.Type != hooks.TypeHTTP || h.URL != "https://hooks.example/check?key=SECRETQ" || h.Headers["Authorization"] != "Bearer $TOKEN" ||
		len(h.AllowedEnvVars) != 1 || h.Timeout != hooks.DefaultRequestTimeout {
		t.Errorf("http hook %+v", h)
	}
	if cmd.Type != hooks.TypeCommand || cmd.Timeout != hooks.DefaultTimeout {
		t.Errorf("command hook %+v", cmd)
	}
	problems := strings.Join(c.Problems, "\n")
	for _, want := range []string{"[0].hooks[2]: a prompt hook without a prompt", "[0].hooks[3]: an http hook without a url",
		`[0].hooks[4]: an http hook's url must be http or https`, "[0].hooks[5]: an http hook's url",
		`[0].hooks[7]: kin has no "webhook" hooks`, "[0].hooks[9]: an agent hook without a prompt",
		"SessionStart[0].hooks[0]: prompt hooks do not run at SessionStart", "SessionStart[0].hooks[1]: agent hooks do not run at SessionStart"} {
		if !strings.Contains(problems, want) {
			t.Errorf("no problem %q in:\n%s", want, problems)
		}
	}
	if len(c.Problems) != 8 {
		t.Errorf("%d problems, want 8:\n%s", len(c.Problems), problems)
	}
	// what a person is shown: what the hook is, never empty, the URL's
	// query masked, header names but not values
	if d := p.Detail(); d != "prompt: Is $ARGUMENTS safe? (model judge-1)" {
		t.Errorf("prompt detail %q", d)
	}
	if d := h.Detail(); d != "POST https://hooks.example/check?key=●●●● (headers: Authorization; variables: TOKEN)" {
		t.Errorf("http detail %q", d)
	}
	if d := h.Display(); strings.Contains(d, "SECRETQ") || strings.Contains(d, "Bearer") || !strings.Contains(d, "POST https://hooks.example/check") {
		t.Errorf("http display %q", d)
	}
	long := p
	long.Prompt = strings.Repeat("check the tests ", 20)
	if d := long.Display(); len(d) > 120 || !strings.HasSuffix(d, "…") {
		t.Errorf("a long prompt's display is not cut short: %q", d)
	}
}

// A prompt or http hook's digest covers every field that says what it
// sends and where: a project's hook changed in any of them is asked about
// again.
func TestPromptAndHTTPDigestsCoverTheirFields(t *testing.T) {
	kinHome, ws, _ := setup(t)
	base := []map[string]any{
		{"type": "prompt", "prompt": "Is it safe?", "model": "m1", "timeout": 10},
		{"type": "http", "url": "https://a.example/h", "headers": map[string]any{"X-T": "$T"}, "allowedEnvVars": []any{"T"}, "timeout": 10},
		{"type": "agent", "prompt": "Is it safe?", "model": "m1", "timeout": 10},
	}
	digests := func(entries []map[string]any) []string {
		write(t, filepath.Join(ws, ".kin", "hooks.json"), settingsWith("Stop", entries...), 0o644)
		c := hooks.Load(kinHome, []string{ws})
		if len(c.Hooks) != 3 || len(c.Problems) != 0 {
			t.Fatalf("%+v %v", c.Hooks, c.Problems)
		}
		return []string{c.Hooks[0].Digest, c.Hooks[1].Digest, c.Hooks[2].Digest}
	}
	was := digests(base)
	changes := []struct {
		i          int
		key        string
		value      any
		whatChange string
	}{
		{0, "prompt", "Is it safe now?", "the prompt"}, {0, "model", "m2", "the model"}, {0, "timeout", 11, "the timeout"},
		{1, "url", "https://b.example/h", "the url"}, {1, "headers", map[string]any{"X-T": "${T}"}, "a header's template"},
		{1, "headers", map[string]any{"X-U": "$T"}, "a header's name"}, {1, "allowedEnvVars", []any{"T", "HOME"}, "allowedEnvVars"},
		{1, "timeout", 11, "the timeout"},
		{2, "prompt", "Is it safe now?", "an agent hook's prompt"}, {2, "model", "m2", "an agent hook's model"}, {2, "timeout", 11, "an agent hook's timeout"},
	}
	for _, ch := range changes {
		entries := []map[string]any{{}, {}, {}}
		for i := range base {
			for k, v := range base[i] {
				entries[i][k] = v
			}
		}
		entries[ch.i][ch.key] = ch.value
		if now := digests(entries); now[ch.i] == was[ch.i] {
			t.Errorf("changing %s did not change the digest", ch.whatChange)
		}
	}
	if now := digests(base); now[0] != was[0] || now[1] != was[1] || now[2] != was[2] {
		t.Error("the same entries have another digest")
	}
	// an agent hook is not the prompt hook with its fields: trusting one
	// is not trusting the other, which reads the workspace first
	if was[2] == was[0] {
		t.Error("an agent hook has the digest of the prompt hook with its fields")
	}
}

// The digests of command, prompt and http hooks are what they were before
// agent hooks ran, byte for byte: nothing a person trusted is asked again.
func TestDigestsOfOtherTypesAreUnchanged(t *testing.T) {
	five := 5 * time.Second
	cases := []struct {
		h    hooks.Hook
		want string
	}{
		{hooks.Hook{File: "/p/.kin/hooks.json", Event: hooks.PreToolUse, Matcher: "Bash", Type: hooks.TypeCommand, Command: "sh guard.sh", Timeout: 60 * time.Second},
			"sha256:fd92e46625954b7052e69d6102919741eab27542a59f19f12daf34d36751bbb2"},
		{hooks.Hook{File: "/p/.kin/hooks.json", Event: hooks.Stop, Type: hooks.TypePrompt, Prompt: "Were the tests run?", Model: "m1", Timeout: five},
			"sha256:5ddf4fd56edd39e65eaa0eb860c8f976467798684c7f00bd3652fea3af1784bf"},
		{hooks.Hook{File: "/p/.kin/hooks.json", Event: hooks.PreToolUse, Type: hooks.TypeHTTP, URL: "https://a.example/h", Headers: map[string]string{"X-T": "$T"},
			AllowedEnvVars: []string{"T"}, Timeout: five}, "sha256:5192432f26b14fa966faa265372b13c9e6d77833fa1b966e8fa189d0bc056a6b"},
	}
	for _, c := range cases {
		if got := c.h.Current(); got != c.want {
			t.Errorf("%s hook: digest %s, want %s", c.h.Type, got, c.want)
		}
	}
}

// The prompt: $ARGUMENTS is the input JSON, every time it appears; without
// it the input follows the prompt. No environment variable is expanded.
func TestPromptBuilding(t *testing.T) {
	t.Setenv("KIN_TEST_SECRET", "s3cret")
	in := []byte(`{"tool_name":"Bash"}`)
	if got := hooks.BuildPrompt("Judge $ARGUMENTS; again: $ARGUMENTS", in); got != `Judge {"tool_name":"Bash"}; again: {"tool_name":"Bash"}` {
		t.Errorf("replaced: %q", got)
	}
	if got := hooks.BuildPrompt("Is it safe?\n", in); got != "Is it safe?\n\n"+`{"tool_name":"Bash"}` {
		t.Errorf("appended: %q", got)
	}
	if got := hooks.BuildPrompt("key $KIN_TEST_SECRET ${KIN_TEST_SECRET} $ARGUMENTS", in); strings.Contains(got, "s3cret") {
		t.Errorf("an environment variable was expanded: %q", got)
	}
}

// The model's answer: one JSON object with a boolean ok, in a fence or
// with text around it; anything else is an error (the hook fails open).
func TestVerdictParsing(t *testing.T) {
	cases := []struct {
		answer     string
		ok, imp    bool
		reason     string
		err        string
		whatIsThis string
	}{
		{`{"ok": true}`, true, false, "", "", "plain"},
		{`{"ok": false, "reason": "no rm"}`, false, false, "no rm", "", "blocked"},
		{"```json\n{\"ok\": false, \"reason\": \"tests fail\"}\n```", false, false, "tests fail", "", "fenced"},
		{"Looking at the call {it deletes files}.\nAnswer: {\"ok\":false,\"reason\":\"deletes\"} done", false, false, "deletes", "", "text around"},
		{`{"ok": false, "impossible": true, "reason": "no network"}`, false, true, "no network", "", "impossible"},
		{`{"note": {"ok": false}} {"ok": true}`, true, false, "", "", "an object without ok passed over, its inner one not read"},
		{`{"ok": true} and again {"ok": true, "reason": "x"}`, true, false, "", "", "agreeing answers"},
		{"", false, false, "", "empty", "empty"},
		{"   \n", false, false, "", "empty", "blank"},
		{"I think it is fine.", false, false, "", "not JSON", "prose"},
		{`{"decision": "block", "reason": "x"}`, false, false, "", `no JSON object with "ok"`, "missing ok"},
		{`{"ok": "false"}`, false, false, "", "not true or false", "ok a string"},
		{`{"ok": false, "reason": "a"} {"ok": true}`, false, false, "", "disagree", "disagreeing answers"},
		{`{"ok": fals`, false, false, "", `no JSON object with "ok"`, "cut short"},
	}
	for _, c := range cases {
		ok, imp, reason, err := hooks.ParseVerdict(c.answer)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.whatIsThis, err, c.err)
		case c.err == "" && (err != nil || ok != c.ok || imp != c.imp || reason != c.reason):
			t.Errorf("%s: %v %v %q %v", c.whatIsThis, ok, imp, reason, err)
		}
	}
}

// asker is a model service for prompt hooks: it answers with answer, or
// fails, or waits for ctx; it keeps what it was sent.
type asker struct {
	answer   string
	allowErr error
	sendErr  error
	stall    bool
	got      []hooks.PromptRequest
}

func (a *asker) Allow(_ context.Context, q hooks.PromptRequest) (func(), error) {
	return func() {}, a.allowErr
}

func (a *asker) Send(ctx context.Context, q hooks.PromptRequest) (string, error) {
	a.got = append(a.got, q)
	if a.stall {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return a.answer, a.sendErr
}

func promptHook(ev hooks.Event, timeout time.Duration) hooks.Hook {
	return hooks.Hook{Event: ev, Type: hooks.TypePrompt, Prompt: "Deny any rm: $ARGUMENTS", Timeout: timeout, Owner: hooks.Person}
}

// A prompt hook's ok:false blocks as a command hook's block does (a
// PreToolUse deny); ok:true does nothing; Stop's impossible lets the
// model stop; everything else fails, blocking nothing.
func TestPromptHookAnswers(t *testing.T) {
	_, ws, r := setup(t)
	in := hooks.Input{SessionID: "s1", Cwd: ws, ToolName: "Bash", KinToolName: "bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)}
	a := &asker{answer: "```json\n{\"ok\": false, \"reason\": \"no rm\"}\n```"}
	r.Ask = a
	res := r.Run(context.Background(), promptHook(hooks.PreToolUse, time.Second), in)
	if !res.Block || res.Decision != "deny" || res.Reason != "no rm" || res.Failure != "" {
		t.Fatalf("ok:false: %+v", res)
	}
	q := a.got[0]
	if q.Instructions != *hooks.PromptText || !strings.Contains(q.Instructions, `"ok"`) || q.Model != "" ||
		!strings.HasPrefix(q.Text, "Deny any rm: {") || !strings.Contains(q.Text, `"hook_event_name":"PreToolUse"`) ||
		!strings.Contains(q.Text, `"tool_input":{"command":"rm -rf /"}`) || strings.Contains(q.Text, "sk-CANARY") {
		t.Errorf("the request: %+v", q)
	}
	a.answer = `{"ok": false}`
	if res := r.Run(context.Background(), promptHook(hooks.UserPromptSubmit, time.Second), in); !res.Block || res.Decision != "" || res.Reason == "" {
		t.Errorf("ok:false without a reason at UserPromptSubmit: %+v", res)
	}
	a.answer = `{"ok": true, "reason": "fine"}`
	if res := r.Run(context.Background(), promptHook(hooks.PreToolUse, time.Second), in); res.Block || res.Decision != "" || res.Failure != "" || res.Context != "" {
		t.Errorf("ok:true: %+v", res)
	}
	a.answer = `{"ok": false, "impossible": true, "reason": "needs a network"}`
	if res := r.Run(context.Background(), promptHook(hooks.Stop, time.Second), in); res.Block || !strings.Contains(res.Message, "needs a network") {
		t.Errorf("impossible at Stop: %+v", res)
	}
	if res := r.Run(context.Background(), promptHook(hooks.PostToolUse, time.Second), in); !res.Block || res.Reason != "needs a network" {
		t.Errorf("impossible is Stop's only: %+v", res)
	}
	for _, ans := range []string{"", "Sure, that is fine.", `{"verdict": "deny"}`, `{"ok": "no"}`} {
		a.answer = ans
		res := r.Run(context.Background(), promptHook(hooks.PreToolUse, time.Second), in)
		if res.Block || res.Decision != "" || !strings.Contains(res.Failure, "blocks nothing") {
			t.Errorf("answer %q: %+v", ans, res)
		}
	}
	a.answer, a.sendErr = "", errors.New(`POST "https://svc.example/v1/responses?api-key=QSECRET": HTTP 500`)
	if res := r.Run(context.Background(), promptHook(hooks.PreToolUse, time.Second), in); res.Block || !strings.Contains(res.Failure, "HTTP 500") || strings.Contains(res.Failure, "QSECRET") {
		t.Errorf("a service error: %+v", res)
	}
	a.sendErr, a.allowErr = nil, errors.New("a spend limit: kin stopped before the next model request")
	n := len(a.got)
	if res := r.Run(context.Background(), promptHook(hooks.PreToolUse, time.Second), in); res.Block || !strings.Contains(res.Failure, "not sent (a spend limit") || len(a.got) != n {
		t.Errorf("refused by a limit: %+v (sent %d)", res, len(a.got)-n)
	}
	a.allowErr, a.stall = nil, true
	start := time.Now()
	res = r.Run(context.Background(), promptHook(hooks.PreToolUse, 200*time.Millisecond), in)
	if res.Block || !strings.Contains(res.Failure, "did not answer within 200ms") || time.Since(start) > 5*time.Second {
		t.Errorf("a model that stalls: %+v", res)
	}
	r.Ask = nil
	if res := r.Run(context.Background(), promptHook(hooks.PreToolUse, time.Second), in); res.Block || res.Failure == "" {
		t.Errorf("no model service: %+v", res)
	}
}
