package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/tool"
)

// agentHooks is a "hooks" setting with one agent hook for event.
func agentHooks(event, matcher string, hook map[string]any) map[string]any {
	return typedHooks("agent", event, matcher, hook)
}

// toolNames are the names of the tools a request offered.
func toolNames(r modeltest.Request) []string {
	var names []string
	for _, tl := range r.Tools {
		n, _ := tl["name"].(string)
		names = append(names, n)
	}
	return names
}

// toolOutputs are the outputs a request carries back, by call id.
func toolOutputs(r modeltest.Request) map[string]string {
	out := map[string]string{}
	for _, it := range r.Input {
		if it["type"] == "function_call_output" {
			id, _ := it["call_id"].(string)
			o, _ := it["output"].(string)
			out[id] = o
		}
	}
	return out
}

// hookRequests are the requests of hooks (isHook), and the turn's.
func hookRequests(m *modeltest.Server) (hookReqs, turnReqs []modeltest.Request) {
	for _, r := range m.Requests() {
		if isHook(r) {
			hookReqs = append(hookReqs, r)
		} else {
			turnReqs = append(turnReqs, r)
		}
	}
	return
}

// An agent hook at PreToolUse whose judge reads a file first, then
// answers ok:false: the call is blocked with its reason, the file's
// content reached the judge's second request, only kin's read-only file
// tools were offered, the judge's read met no hook (a PreToolUse hook for
// reads did not run) and asked nobody, and the judge's usage counts in
// the turn's.
func TestAgentHookReadsThenDenies(t *testing.T) {
	cfg := agentHooks("PreToolUse", "Bash", map[string]any{"prompt": "Read POLICY.md and deny what it forbids. The call: $ARGUMENTS"})
	cfg["PreToolUse"] = append(cfg["PreToolUse"].([]any), map[string]any{"matcher": "Read|Grep|LS", "hooks": []any{
		map[string]any{"type": "command", "command": `touch "$CLAUDE_PROJECT_DIR/judge-was-hooked"`}}})
	svc, m, rec, a, ws := hookService(t, map[string]any{"hooks": cfg})
	sid := newSession(t, svc, ws)
	writeFile(t, filepath.Join(ws, "build", "keep.txt"), "x")
	writeFile(t, filepath.Join(ws, "POLICY.md"), "POLICY-7: never delete build/\n")
	m.Route(isHook,
		modeltest.Reply{Calls: []modeltest.Call{{ID: "j1", Name: "read_file", Arguments: `{"path":"POLICY.md"}`}}, Usage: modeltest.Usage{Input: 300, Output: 10}},
		modeltest.Reply{Text: []string{`{"ok": false, "reason": "POLICY-7 forbids deleting build/"}`}, Usage: modeltest.Usage{Input: 400, Output: 8}},
	)
	d := deniedCleanUp(t, svc, m, rec, sid, ws)
	hookReqs, turnReqs := hookRequests(m)
	if len(hookReqs) != 2 || len(turnReqs) != 2 {
		t.Fatalf("%d hook requests and %d turn requests, want 2 and 2", len(hookReqs), len(turnReqs))
	}
	for i, r := range hookReqs {
		if names := toolNames(r); !slices.Equal(names, []string{"read_file", "list_dir", "search"}) {
			t.Errorf("the judge's request %d offered %v", i, names)
		}
		if r.Model != "mock" || !strings.Contains(r.FirstUserText(), `"command":"rm -rf build"`) {
			t.Errorf("the judge's request %d: model %q, question %q", i, r.Model, r.FirstUserText())
		}
	}
	if out := toolOutputs(hookReqs[1])["j1"]; !strings.Contains(out, "POLICY-7: never delete build/") {
		t.Errorf("the judge's read did not reach its second request: %q", out)
	}
	if out, ok := turnReqs[1].LastToolOutput(); !ok || !strings.Contains(out, "A hook blocked this call") || !strings.Contains(out, "POLICY-7 forbids deleting build/") {
		t.Errorf("the model's next request does not carry the reason: %q", out)
	}
	if n, ok := rec.noticeWith("blocked: POLICY-7"); !ok || !strings.Contains(n.Message, "agent: Read POLICY.md") {
		t.Errorf("no notice of the block: %+v", n)
	}
	if _, err := os.Stat(filepath.Join(ws, "judge-was-hooked")); err == nil {
		t.Error("a PreToolUse hook ran for the judge's own read")
	}
	if len(a.asked) != 0 {
		t.Errorf("the person was asked %d questions", len(a.asked))
	}
	if d.Usage.InputTokens != 1000 || d.Usage.OutputTokens != 33 {
		t.Errorf("the turn's usage %+v does not count the judge's requests", d.Usage)
	}
}

// mcpLookup stands for an MCP server's tool that says it only reads.
type mcpLookup struct{ prepared *atomic.Int32 }

func (mcpLookup) Spec() tool.Spec {
	return tool.Spec{Name: "mcp__srv__lookup", Description: "look something up", Parameters: json.RawMessage(`{"type":"object"}`), Kind: tool.KindRead}
}
func (mcpLookup) ReadOnly() bool   { return true }
func (mcpLookup) Deferrable() bool { return true }
func (l mcpLookup) Prepare(context.Context, tool.Env, json.RawMessage) (*tool.Action, error) {
	l.prepared.Add(1)
	return &tool.Action{Run: func(context.Context, func(string)) tool.Result { return tool.Result{Output: "looked up"} }}, nil
}

// A judge is offered no command, edit, MCP, delegate or ask tool, and a
// call it makes to one anyway is denied: nothing runs. Its read of a
// secret (.env) is denied, not asked, and nothing of it is sent; a path
// outside the workspace is refused as it is for the model, and so are the
// files of a skill the model loaded (the model's grant, not the judge's).
func TestAgentHookJudgeOnlyReadsTheWorkspace(t *testing.T) {
	var prepared atomic.Int32
	svc, m, rec, a, ws := hookServiceWith(t, map[string]any{"hooks": agentHooks("PreToolUse", "Read",
		map[string]any{"prompt": "Is this read fine? $ARGUMENTS"})}, []tool.Tool{mcpLookup{&prepared}})
	sid := newSession(t, svc, ws)
	writeFile(t, filepath.Join(ws, "notes.txt"), "notes of the project\n")
	writeFile(t, filepath.Join(ws, ".env"), "SECRET_TOKEN=sk-live-CANARY\n")
	outside := filepath.Join(t.TempDir(), "outside.txt")
	writeFile(t, outside, "OUTSIDE-CANARY\n")
	// a skill the model loaded, outside the workspace: the model may read
	// its files, a judge may not
	skill := filepath.Join(t.TempDir(), "skill")
	writeFile(t, filepath.Join(skill, "SKILL.md"), "SKILL-CANARY\n")
	svc.mu.Lock()
	sess := svc.sessions[sid]
	svc.mu.Unlock()
	sess.loadSkill(loadedSkill{name: "s", dir: skill})
	if tg, err := sess.toolEnv("", "").Workspace.Resolve(filepath.Join(skill, "SKILL.md")); err != nil || tg.Granted == "" {
		t.Fatalf("the model may not read the loaded skill's files: %+v %v", tg, err)
	}
	m.Route(isHook,
		modeltest.Reply{Calls: []modeltest.Call{
			{ID: "j7", Name: "read_file", Arguments: `{"path":` + strconvQuote(filepath.Join(skill, "SKILL.md")) + `}`},
			{ID: "j1", Name: "bash", Arguments: `{"command":"touch pwned"}`},
			{ID: "j2", Name: "write_file", Arguments: `{"path":"pwned2","content":"x"}`},
			{ID: "j3", Name: "mcp__srv__lookup", Arguments: `{}`},
			{ID: "j4", Name: "delegate", Arguments: `{"task":"touch pwned3"}`},
			{ID: "j5", Name: "read_file", Arguments: `{"path":".env"}`},
			{ID: "j6", Name: "read_file", Arguments: `{"path":` + strconvQuote(outside) + `}`},
		}},
		modeltest.Reply{Text: []string{`{"ok": true}`}},
	)
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"notes.txt"}`}}},
		modeltest.Reply{Text: []string{"read it"}},
	)
	if d := ask(t, svc, rec, sid, TextInput("read the notes")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	hookReqs, turnReqs := hookRequests(m)
	if len(hookReqs) != 2 || len(turnReqs) != 2 {
		t.Fatalf("%d hook requests and %d turn requests, want 2 and 2", len(hookReqs), len(turnReqs))
	}
	offered := toolNames(hookReqs[0])
	for _, name := range []string{"bash", "write_file", "edit_file", "mcp__srv__lookup", DelegateToolName, AskToolName, PlanToolName, SkillToolName} {
		if slices.Contains(offered, name) {
			t.Errorf("the judge was offered %s: %v", name, offered)
		}
	}
	if !slices.Contains(toolNames(turnReqs[0]), "mcp__srv__lookup") {
		t.Error("the test's MCP tool is not the session's: the check above proves nothing")
	}
	for _, f := range []string{"pwned", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err == nil {
			t.Errorf("the judge's call made %s", f)
		}
	}
	if prepared.Load() != 0 {
		t.Error("the judge's call reached the MCP tool")
	}
	outs := toolOutputs(hookReqs[1])
	for _, id := range []string{"j1", "j2", "j3", "j4"} {
		if !strings.HasPrefix(outs[id], "[denied]") || !strings.Contains(outs[id], "may call only read_file, list_dir, search") {
			t.Errorf("call %s: %q", id, outs[id])
		}
	}
	if o := outs["j5"]; !strings.HasPrefix(o, "[denied]") || !strings.Contains(o, "needs the person's approval") {
		t.Errorf("the judge's read of .env: %q", o)
	}
	if o := outs["j6"]; !strings.Contains(o, "refused") {
		t.Errorf("the judge's read outside the workspace: %q", o)
	}
	if o := outs["j7"]; !strings.Contains(o, "refused") {
		t.Errorf("the judge's read of a loaded skill's file: %q", o)
	}
	for _, r := range m.Requests() {
		if txt := r.Text(); strings.Contains(txt, "sk-live-CANARY") || strings.Contains(txt, "OUTSIDE-CANARY") || strings.Contains(txt, "SKILL-CANARY") {
			t.Error("a secret or a file outside the workspace was sent")
		}
	}
	if len(a.asked) != 0 {
		t.Errorf("the person was asked %d questions from inside a hook", len(a.asked))
	}
	if out, ok := turnReqs[1].LastToolOutput(); !ok || !strings.Contains(out, "notes of the project") {
		t.Errorf("the call the judge allowed did not run: %q", out)
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A judge that ends without a verdict fails open, saying so; its usage
// still counts in the turn's.
func TestAgentHookWithoutAVerdictFailsOpen(t *testing.T) {
	svc, m, rec, _, ws := hookService(t, map[string]any{"hooks": agentHooks("UserPromptSubmit", "", map[string]any{"prompt": "Is this question about the build?"})})
	sid := newSession(t, svc, ws)
	m.Route(isHook,
		modeltest.Reply{Calls: []modeltest.Call{{ID: "j1", Name: "list_dir", Arguments: `{}`}}, Usage: modeltest.Usage{Input: 50, Output: 5}},
		modeltest.Reply{Text: []string{"I looked around; it seems fine."}, Usage: modeltest.Usage{Input: 60, Output: 6}},
	)
	m.Script(modeltest.Reply{Text: []string{"answer"}, Usage: modeltest.Usage{Input: 100, Output: 10}})
	d := ask(t, svc, rec, sid, TextInput("what is up?"))
	if d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	n, ok := rec.noticeWith(`the model's answer is not {"ok"`)
	if !ok || n.Level != "warning" || !strings.Contains(n.Message, "blocks nothing") {
		t.Errorf("no failure notice: %+v", n)
	}
	if d.Usage.InputTokens != 210 || d.Usage.OutputTokens != 21 {
		t.Errorf("the turn's usage %+v does not count the judge's requests", d.Usage)
	}
}

// A judge that does not answer within the hook's timeout is stopped and
// fails open: the question goes to the model.
func TestAgentHookTimeoutFailsOpen(t *testing.T) {
	svc, m, rec, _, ws := hookService(t, map[string]any{"hooks": agentHooks("UserPromptSubmit", "", map[string]any{"prompt": "Judge it", "timeout": 0.3})})
	sid := newSession(t, svc, ws)
	m.Route(isHook, modeltest.Reply{Stall: modeltest.StallAfterHeaders})
	m.Script(modeltest.Reply{Text: []string{"answer"}})
	if d := ask(t, svc, rec, sid, TextInput("what is up?")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if n, ok := rec.noticeWith("gave no verdict within 300ms"); !ok || !strings.Contains(n.Message, "blocks nothing") {
		t.Errorf("no timeout notice: %+v", n)
	}
	if _, turnReqs := hookRequests(m); len(turnReqs) != 1 || turnReqs[0].LastUserText() != "what is up?" {
		t.Error("the question did not go to the model after the hook")
	}
}

// A spend limit the person will not pass refuses the judge's request: the
// hook fails open, saying so, and sends nothing.
func TestAgentHookRefusedByALimitFailsOpen(t *testing.T) {
	svc, m, rec, a, ws := hookService(t, map[string]any{"limits": settings.Limits{TurnTokens: 10},
		"hooks": agentHooks("UserPromptSubmit", "", map[string]any{"prompt": "Is this question about the build?"})}, permission.Deny)
	sid := newSession(t, svc, ws)
	if d := ask(t, svc, rec, sid, TextInput("what is up?")); d.Status != TurnLimit {
		t.Fatalf("%+v", d)
	}
	if len(m.Requests()) != 0 || len(a.limits()) != 1 {
		t.Errorf("%d requests sent, %d limit questions", len(m.Requests()), len(a.limits()))
	}
	if n, ok := rec.noticeWith("not sent (a spend limit"); !ok || !strings.Contains(n.Message, "blocks nothing") {
		t.Errorf("no notice that the limit refused the judge's request: %+v", n)
	}
}
