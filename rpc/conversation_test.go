package rpc_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// put writes a workspace file, making its directories.
func (e *env) put(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.WS, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// settings writes $KIN_HOME/settings.json.
func (e *env) settings(json string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.Home, "settings.json"), []byte(json), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// twoModels are settings with a Responses model and a Chat Completions one
// (no images), both at the mock.
func twoModels(e *env, window int) string {
	return fmt.Sprintf(`{"models":[
	  {"id":"mock-1","name":"Mock One","contextWindow":%d,"efforts":["low","medium","high"]},
	  {"id":"local","contextWindow":8000,"api":"chat","images":false,"baseUrl":%q}]}`, window, e.Model.URL())
}

func (e *env) connect() *rpctest.Editor {
	e.t.Helper()
	ed := rpctest.Start(e.t, e.Options())
	ed.Initialize(e.WS)
	return ed
}

func openSession(t *testing.T, ed *rpctest.Editor, p rpc.SessionNewParams) rpc.SessionResult {
	t.Helper()
	var res rpc.SessionResult
	ed.MustCall("session/new", p, &res)
	return res
}

func startParts(t *testing.T, ed *rpctest.Editor, sid string, parts ...rpc.InputPart) string {
	t.Helper()
	var res rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: parts}, &res)
	return res.TurnID
}

func resume(t *testing.T, ed *rpctest.Editor, sid string) rpc.SessionResumeResult {
	t.Helper()
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	return res
}

func historyTypes(h []rpc.HistoryItem) string {
	var out []string
	for _, it := range h {
		out = append(out, it.Type)
	}
	return strings.Join(out, " ")
}

func TestProjectInstructionsReachTheModel(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.Home, "AGENTS.md"), []byte("Answer in British English."), 0o600); err != nil {
		t.Fatal(err)
	}
	e.put("AGENTS.md", "Run go test ./... before you say done.")
	e.put("pkg/CLAUDE.md", "pkg: no globals.")
	e.put("pkg/a.go", "package pkg\n")
	e.put("big/AGENTS.md", strings.Repeat("x", 40<<10))
	e.put("big/b.go", "package big\n")
	ed := e.connect()
	trustProjects(ed)
	s := openSession(t, ed, rpc.SessionNewParams{})
	// The repository's AGENTS.md is withheld until the person trusts it
	// (at the first question); the person's own is in force.
	if len(s.Instructions) != 1 || s.Instructions[0].Path != filepath.Join(e.Home, "AGENTS.md") {
		t.Fatalf("session/new instructions %+v", s.Instructions)
	}
	e.Model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"pkg/a.go"}`}}},
		modeltest.Reply{Text: []string{"ok"}},
	)
	completed(ed, start(t, ed, s.Session.SessionID, "look at pkg"))
	reqs := e.Model.Requests()
	first, second := reqs[0].Instructions, reqs[1].Instructions
	for _, want := range []string{"You are kin, a coding agent", "Answer in British English.", "Run go test ./... before you say done.",
		"cannot approve a call", `<instructions path="` + filepath.Join(e.WS, "AGENTS.md") + `">`} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request's instructions lack %q", want)
		}
	}
	if strings.Contains(first, "pkg: no globals.") || !strings.Contains(second, "pkg: no globals.") ||
		strings.Index(second, "Run go test") > strings.Index(second, "pkg: no globals.") {
		t.Errorf("pkg/CLAUDE.md should join the instructions after the call touched pkg, nearest last:\n%s", second)
	}

	// A file that is attached brings its directory's (cut) instructions;
	// one edited between turns is read again and noted.
	e.put("AGENTS.md", "Run go test -race ./... before you say done.")
	e.Model.Script(modeltest.Reply{Text: []string{"fine"}})
	tid := startParts(t, ed, s.Session.SessionID, rpc.InputPart{Type: "text", Text: "and this?"}, rpc.InputPart{Type: "file", Path: "big/b.go"})
	completed(ed, tid)
	ed.Wait("notice", rpctest.All(rpctest.Field("source", "instructions"), func(m map[string]any) bool {
		return strings.Contains(fmt.Sprint(m["message"]), "(AGENTS.md, big/AGENTS.md)")
	}))
	third := e.Model.Requests()[2]
	if !strings.Contains(third.Instructions, "go test -race") || !strings.Contains(third.Instructions, "the remaining 8192 bytes are not in force") {
		t.Errorf("the third request's instructions lack the edit or the cut file")
	}
	if !strings.Contains(third.Text(), "the project's instructions changed since you last saw them; new or edited: AGENTS.md, big/AGENTS.md") {
		t.Errorf("the model was not told of the change:\n%s", third.Text())
	}
	res := resume(t, e.connect(), s.Session.SessionID)
	if len(res.Instructions) != 4 || res.Instructions[2].Path != filepath.Join(e.WS, "big", "AGENTS.md") || !res.Instructions[2].Truncated {
		t.Errorf("resume instructions %+v", res.Instructions)
	}
	if !strings.Contains(historyTypes(res.History), "instructions user") {
		t.Errorf("history %s", historyTypes(res.History))
	}
}

func TestInputPartsReachTheModelRequest(t *testing.T) {
	e := newEnv(t)
	e.settings(twoModels(e, 100000))
	e.put("main.go", "package main\n\nfunc main() {\n\tpanic(1)\n}\n")
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{}).Session.SessionID
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	rng := &rpc.Range{Start: rpc.Position{Line: 2}, End: rpc.Position{Line: 4, Character: 1}}
	e.Model.Script(modeltest.Reply{Text: []string{"It panics."}})
	tid := startParts(t, ed, sid,
		rpc.InputPart{Type: "text", Text: "why does this fail?"},
		rpc.InputPart{Type: "file", Path: "main.go", Range: rng},
		rpc.InputPart{Type: "selection", Path: "main.go", Range: &rpc.Range{Start: rpc.Position{Line: 3, Character: 1}, End: rpc.Position{Line: 3, Character: 9}}, Text: "panic(1)"},
		rpc.InputPart{Type: "diagnostics", Path: "main.go", Items: []rpc.DiagnosticItem{{Range: *rng, Severity: "warning", Message: "unreachable code", Source: "vet"}}},
		rpc.InputPart{Type: "resource", URI: "untitled:Untitled-1", MimeType: "text/plain", Text: "scratch notes"},
		rpc.InputPart{Type: "image", MimeType: "image/png", Data: png},
	)
	started := ed.Wait("turn/started", rpctest.Field("turnId", tid))
	completed(ed, tid)
	parts := e.Model.Requests()[0].InputParts()
	var texts []string
	for _, p := range parts[:5] {
		texts = append(texts, fmt.Sprint(p["text"]))
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"why does this fail?", "<file path=\"main.go\" lines=\"3-5\">\n     3\tfunc main() {\n     4\t\tpanic(1)\n     5\t}",
		"<selection path=\"main.go\" lines=\"4\">\npanic(1)\n</selection>", "3:1 warning: unreachable code (vet)",
		"<resource uri=\"untitled:Untitled-1\" mimeType=\"text/plain\">\nscratch notes"} {
		if !strings.Contains(all, want) {
			t.Errorf("the request lacks %q:\n%s", want, all)
		}
	}
	if len(parts) != 6 || parts[5]["type"] != "input_image" || parts[5]["image_url"] != "data:image/png;base64,"+png {
		t.Errorf("image part %v", parts[len(parts)-1])
	}
	// turn/started and history keep what was attached, not the contents.
	if ps, _ := started["parts"].([]any); len(ps) != 5 || !strings.Contains(fmt.Sprint(ps[0]), "path:main.go") || strings.Contains(fmt.Sprint(started), png) {
		t.Errorf("turn/started parts %v", started["parts"])
	}
	user := resume(t, ed, sid).History[0]
	if user.Text != "why does this fail?" || len(user.Parts) != 5 || user.Parts[0].Range == nil || user.Parts[0].Text != "" || user.Parts[0].Bytes == 0 ||
		user.Parts[4].Data != "" || user.Parts[4].MimeType != "image/png" {
		t.Errorf("history %+v", user)
	}

	// Bad parts: refused naming the part, nothing sent.
	before := len(e.Model.Requests())
	for _, c := range []struct {
		parts []rpc.InputPart
		want  string
	}{
		{[]rpc.InputPart{{Type: "text", Text: "read"}, {Type: "file", Path: "../../etc/passwd"}}, "input[1] (file): ../../etc/passwd: refused"},
		{[]rpc.InputPart{{Type: "file", Path: "gone.go"}}, "input[0] (file): gone.go: gone.go does not exist"},
		{[]rpc.InputPart{{Type: "image", MimeType: "image/png", Data: "%%%"}}, "input[0] (image): data is not base64"},
		{[]rpc.InputPart{{Type: "text", Text: "x"}, {Type: "video"}}, "input[1] (video): unknown part type"},
	} {
		code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: c.parts})
		if code != rpc.CodeInvalidParams || !strings.Contains(msg, c.want) {
			t.Errorf("%+v: %d %q, want %q", c.parts, code, msg, c.want)
		}
	}
	code, msg := ed.CallErr("turn/start", map[string]any{"sessionId": sid, "input": 42})
	if code != rpc.CodeInvalidParams || !strings.Contains(msg, "input must be a string or a list of parts") {
		t.Errorf("input 42: %d %q", code, msg)
	}
	var c rpc.SessionConfigureResult
	ed.MustCall("session/configure", rpc.SessionConfigureParams{SessionID: sid, Model: ptr("local")}, &c)
	code, msg = ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: []rpc.InputPart{{Type: "text", Text: "and this"}, {Type: "image", MimeType: "image/png", Data: png}}})
	if code != rpc.CodeInvalidParams || !strings.Contains(msg, "input[1] (image): the model local does not take images") {
		t.Errorf("an image for a model without images: %d %q", code, msg)
	}
	if n := len(e.Model.Requests()); n != before {
		t.Errorf("%d requests were sent for refused questions", n-before)
	}
	// The session still serves.
	e.Model.Script(modeltest.Reply{Text: []string{"yes"}})
	if done := completed(ed, start(t, ed, sid, "still there?")); done["status"] != "completed" {
		t.Errorf("after refusals: %v", done)
	}
}

func TestReasoningCarriesOverThroughTheEditor(t *testing.T) {
	e := newEnv(t)
	e.put("a.go", "package a\n")
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{Effort: "high"}).Session.SessionID
	e.Model.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"**Reading** a.go"}, Encrypted: "enc-A"}},
			Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"Nothing to fix."}, Encrypted: "enc-B"}}, Text: []string{"Fine."}},
		modeltest.Reply{Text: []string{"Still fine."}},
	)
	tid := start(t, ed, sid, "check a.go")
	completed(ed, tid)
	completed(ed, start(t, ed, sid, "sure?"))
	var deltas []string
	for _, n := range ed.Notes("turn/reasoning") {
		if n["turnId"] == tid {
			deltas = append(deltas, fmt.Sprint(n["text"]))
		}
	}
	if strings.Join(deltas, "") != "**Reading** a.goNothing to fix." {
		t.Errorf("turn/reasoning %q", deltas)
	}
	reqs := e.Model.Requests()
	sent := func(r modeltest.Request) string {
		var out []string
		for _, it := range r.ReasoningItems() {
			out = append(out, fmt.Sprint(it["encrypted_content"]))
		}
		return strings.Join(out, ",")
	}
	if sent(reqs[1]) != "enc-A" || sent(reqs[2]) != "enc-A,enc-B" {
		t.Errorf("reasoning sent back: same turn %q, next turn %q", sent(reqs[1]), sent(reqs[2]))
	}
	if reqs[0].Effort() != "high" || reqs[0].Reasoning["summary"] != "auto" || reqs[0].Include[0] != "reasoning.encrypted_content" {
		t.Errorf("request reasoning %v include %v", reqs[0].Reasoning, reqs[0].Include)
	}
	h := resume(t, ed, sid).History
	if got := historyTypes(h); got != "user reasoning toolCall reasoning assistant turn user assistant turn" || h[1].Text != "**Reading** a.go" {
		t.Errorf("history %s", got)
	}
}

func TestAServiceWithoutReasoningIsToldOnce(t *testing.T) {
	e := newEnv(t)
	e.Model.RefuseParams("reasoning", "include")
	ed, sid := e.editor()
	e.Model.Script(modeltest.Reply{Text: []string{"one"}}, modeltest.Reply{Text: []string{"two"}})
	if d := completed(ed, start(t, ed, sid, "hi")); d["status"] != "completed" {
		t.Fatalf("%v", d)
	}
	completed(ed, start(t, ed, sid, "again"))
	reqs := e.Model.Requests()
	if len(reqs) != 3 || reqs[1].Reasoning != nil || reqs[2].Reasoning != nil {
		t.Fatalf("%d requests; want one refused, then two without reasoning", len(reqs))
	}
	notes := 0
	for _, n := range ed.Notes("notice") {
		if n["source"] == "model" && strings.Contains(fmt.Sprint(n["message"]), "refused kin's reasoning parameters") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d notices, want one", notes)
	}
}

func TestAModelPerSession(t *testing.T) {
	e := newEnv(t)
	e.settings(twoModels(e, 100000))
	ed := e.connect()
	var list rpc.ModelsListResult
	ed.MustCall("models/list", nil, &list)
	if list.Default != "mock-1" || len(list.Models) != 2 || list.Models[1].API != "chat" || list.Models[1].Images || !list.Models[0].Configured ||
		list.Models[0].Name != "Mock One" || len(list.Models[1].Efforts) != 0 {
		t.Fatalf("models/list %+v", list)
	}
	if code, msg := ed.CallErr("session/new", rpc.SessionNewParams{Model: "gpt-9"}); code != rpc.CodeInvalidParams || !strings.Contains(msg, `no model "gpt-9" (it has mock-1, local`) {
		t.Errorf("unknown model: %d %q", code, msg)
	}
	s := openSession(t, ed, rpc.SessionNewParams{Model: "mock-1", Effort: "low"})
	if s.Model != "mock-1" || s.Effort != "low" {
		t.Fatalf("session/new %+v", s)
	}
	sid := s.Session.SessionID
	e.Model.Script(modeltest.Reply{Text: []string{"a"}})
	completed(ed, start(t, ed, sid, "one"))
	if code, msg := ed.CallErr("session/configure", rpc.SessionConfigureParams{SessionID: sid, Effort: ptr("xhigh")}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "takes effort low, medium, high") {
		t.Errorf("bad effort: %d %q", code, msg)
	}
	// Switching to a model without efforts drops the effort.
	var c rpc.SessionConfigureResult
	ed.MustCall("session/configure", rpc.SessionConfigureParams{SessionID: sid, Model: ptr("local")}, &c)
	if c.Model != "local" || c.Effort != "" {
		t.Errorf("configure %+v", c)
	}
	// Refused during a turn.
	hold := make(chan struct{})
	e.Model.Script(modeltest.Reply{Text: []string{"b", "c"}, Hold: hold})
	tid := start(t, ed, sid, "two")
	ed.Wait("turn/delta", rpctest.Field("turnId", tid))
	if code, _ := ed.CallErr("session/configure", rpc.SessionConfigureParams{SessionID: sid, Model: ptr("mock-1")}); code != rpc.CodeBusy {
		t.Errorf("configure during a turn: %d", code)
	}
	close(hold)
	completed(ed, tid)
	reqs := e.Model.Requests()
	if reqs[0].Model != "mock-1" || reqs[0].Effort() != "low" || reqs[1].Model != "local" || reqs[1].API != "chat" || reqs[1].Effort() != "" {
		t.Errorf("requests: %s/%s effort %q, then %s/%s effort %q", reqs[0].API, reqs[0].Model, reqs[0].Effort(), reqs[1].API, reqs[1].Model, reqs[1].Effort())
	}
	// The choice survives resume in another kin.
	ed.Conn.Close()
	<-ed.Done
	ed2 := e.connect()
	res := resume(t, ed2, sid)
	if res.Model != "local" || res.Effort != "" || !strings.Contains(historyTypes(res.History), "turn configure user") {
		t.Errorf("resume: model %q effort %q history %s", res.Model, res.Effort, historyTypes(res.History))
	}
	e.Model.Script(modeltest.Reply{Text: []string{"d"}})
	completed(ed2, start(t, ed2, sid, "three"))
	if last := e.Model.Requests()[2]; last.Model != "local" {
		t.Errorf("after resume the request names %s", last.Model)
	}
}

// TestChatCompletionsRunsATurnWithACall: a model served by Chat Completions
// answers a turn that reads a file.
func TestChatCompletionsRunsATurnWithACall(t *testing.T) {
	e := newEnv(t)
	e.settings(twoModels(e, 100000))
	e.put("a.txt", "hello\n")
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{Model: "local"}).Session.SessionID
	e.Model.Script(
		modeltest.Reply{Text: []string{"Reading."}, Calls: []modeltest.Call{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}, Usage: modeltest.Usage{Input: 300, Output: 12}},
		modeltest.Reply{Text: []string{"It says ", "hello."}, Usage: modeltest.Usage{Input: 340, Output: 5}},
	)
	tid := start(t, ed, sid, "what is in a.txt?")
	done := completed(ed, tid)
	if done["status"] != "completed" || ed.Text(tid) != "Reading.It says hello." {
		t.Fatalf("turn %v text %q", done, ed.Text(tid))
	}
	ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "call_1"), rpctest.Field("status", "completed")))
	reqs := e.Model.Requests()
	out, _ := reqs[1].LastToolOutput()
	if len(reqs) != 2 || reqs[0].API != "chat" || !strings.Contains(out, "hello") || reqs[1].Messages[0]["role"] != "system" {
		t.Errorf("requests %+v", reqs)
	}
	u := done["usage"].(map[string]any)
	if u["contextTokens"] != float64(345) || u["contextWindow"] != float64(8000) || u["inputTokens"] != float64(640) {
		t.Errorf("usage %v", u)
	}
}

// TestSwitchingToASmallerModelSaysItWillCompact: a conversation past the
// new model's threshold is announced when the model is chosen, before the
// next question, with its size and the window in words a person reads.
func TestSwitchingToASmallerModelSaysItWillCompact(t *testing.T) {
	e := newEnv(t)
	e.settings(twoModels(e, 200000))
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{Model: "mock-1"}).Session.SessionID
	e.Model.Script(modeltest.Reply{Text: []string{"a long answer"}, Usage: modeltest.Usage{Input: 70000, Output: 903}})
	completed(ed, start(t, ed, sid, "first question"))
	ed.MustCall("session/configure", rpc.SessionConfigureParams{SessionID: sid, Model: ptr("local")}, nil)
	n := ed.Wait("notice", rpctest.Field("source", "compaction"))
	msg := fmt.Sprint(n["message"])
	if n["sessionId"] != sid || !strings.Contains(msg, "The conversation (about 70,9") || !strings.Contains(msg, "is longer than local's 8,000-token context window: kin will summarise it before your next question") {
		t.Errorf("notice %v", n)
	}
	if strings.Contains(msg, " of 8000") {
		t.Errorf("the notice reads as a fraction: %q", msg)
	}
	// Back to the large model: nothing to say.
	ed.MustCall("session/configure", rpc.SessionConfigureParams{SessionID: sid, Model: ptr("mock-1")}, nil)
	ed.MustCall("session/list", nil, nil)
	// Only compaction's notices count: a machine without bubblewrap adds
	// the sandbox's own.
	if compaction := ed.Count("notice", rpctest.Field("source", "compaction")); compaction != 1 {
		t.Errorf("%d compaction notices; want 1", compaction)
	}
}

func TestContextIsCompactedAndTheFullHistoryStays(t *testing.T) {
	e := newEnv(t)
	e.settings(twoModels(e, 3000))
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{}).Session.SessionID
	e.Model.Script(modeltest.Reply{Text: []string{strings.Repeat("a long answer ", 200)}, Usage: modeltest.Usage{Input: 1500, Output: 900}})
	t1 := start(t, ed, sid, "first question")
	completed(ed, t1)
	u := ed.Wait("turn/usage", rpctest.Field("turnId", t1))
	if u["contextTokens"] != float64(2400) || u["contextWindow"] != float64(3000) {
		t.Errorf("turn/usage %v", u)
	}
	// Past 80% of the window: the next turn compacts first (one request
	// for the summary), then asks from the summary.
	e.Model.Script(modeltest.Reply{Text: []string{"## Asked\nThe first question."}}, modeltest.Reply{Text: []string{"short"}})
	t2 := start(t, ed, sid, "second question")
	if d := completed(ed, t2); d["status"] != "completed" {
		t.Fatalf("%v", d)
	}
	// Said when it starts (editors show "compacting" meanwhile), and when it is done.
	n := ed.Wait("notice", rpctest.Field("source", "compacting"))
	if !strings.Contains(fmt.Sprint(n["message"]), "kin is summarising the earlier conversation") ||
		!strings.Contains(fmt.Sprint(n["message"]), "80% of Mock One's 3,000-token context window") || n["sessionId"] != sid {
		t.Errorf("notice %v", n)
	}
	n = ed.Wait("notice", rpctest.Field("source", "compaction"))
	if !strings.Contains(fmt.Sprint(n["message"]), "80% of Mock One's 3,000-token context window") {
		t.Errorf("notice %v", n)
	}
	reqs := e.Model.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[1].LastUserText(), "a long answer") {
		t.Fatalf("%d requests; want the summary request to carry the conversation", len(reqs))
	}
	next := reqs[2].Text()
	if !strings.Contains(next, "## Asked\nThe first question.") || strings.Contains(next, "a long answer") || reqs[2].LastUserText() != "second question" {
		t.Errorf("the request after the compaction:\n%s", next)
	}
	// On request, in another kin: the whole conversation is still there.
	ed.Conn.Close()
	<-ed.Done
	ed2 := e.connect()
	res := resume(t, ed2, sid)
	if got := historyTypes(res.History); got != "user assistant turn user compaction assistant turn" || !strings.Contains(res.History[1].Text, "a long answer") {
		t.Errorf("history %s", got)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"## Asked\nTwo questions."}})
	var c rpc.SessionCompactResult
	ed2.MustCall("session/compact", rpc.SessionIDParams{SessionID: sid}, &c)
	if !c.Compacted {
		t.Errorf("session/compact %+v", c)
	}
	ed2.Wait("notice", rpctest.All(rpctest.Field("source", "compaction"), func(m map[string]any) bool {
		return strings.Contains(fmt.Sprint(m["message"]), "on request")
	}))
	if h := resume(t, ed2, sid).History; h[len(h)-1].Type != "compaction" || h[len(h)-1].Reason != "requested" {
		t.Errorf("history ends %+v", h[len(h)-1])
	}
	if code, _ := ed2.CallErr("session/compact", rpc.SessionIDParams{SessionID: "s_20261130T231500_000000"}); code != rpc.CodeSessionNotFound {
		t.Errorf("unknown session: %d", code)
	}
}

// goldenConversation records the conversation's frames (see
// TestGoldenFrames): models/list, a session with a model and effort and
// the instructions in force, a question with every kind of part, reasoning
// and usage, a model switched and refused, the summary on request, and the
// history that shows them.
func goldenConversation(t *testing.T, g *recorder, z *normalizer) {
	e := newEnv(t)
	z.fixed = append(z.fixed, e.WS, "/home/ana/src/app", e.Home, "/home/ana/.kin", e.Model.URL(), "http://127.0.0.1:8931/v1")
	e.settings(twoModels(e, 200000))
	e.put("AGENTS.md", "Run go test ./... before you say done.\n")
	e.put("internal/store/AGENTS.md", "Keep writes atomic.\n")
	e.put("internal/store/store.go", "package store\n\nfunc Save() error {\n\treturn nil\n}\n")
	ed := e.connect()
	trustProjects(ed)
	ed.MustCall("models/list", nil, nil)
	var s rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{Title: "atomic saves", Model: "mock-1", Effort: "medium"}, &s)
	sid := s.Session.SessionID
	e.Model.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"**Checking Save**\n\nIt writes in place."}, Encrypted: "gAAAAABpZ3Jvb3Q"}},
			Calls: []modeltest.Call{{ID: "call_1", Name: "read_file", Arguments: `{"path":"internal/store/store.go"}`}}, Usage: modeltest.Usage{Input: 1830, Output: 96}},
		modeltest.Reply{Text: []string{"Save writes in place; ", "write a temp file and rename it."}, Usage: modeltest.Usage{Input: 2010, Output: 41}},
	)
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	rng := rpc.Range{Start: rpc.Position{Line: 2, Character: 0}, End: rpc.Position{Line: 4, Character: 1}}
	tid := startParts(t, ed, sid,
		rpc.InputPart{Type: "text", Text: "Is Save atomic?"},
		rpc.InputPart{Type: "file", Path: "internal/store/store.go", Range: &rng},
		rpc.InputPart{Type: "selection", Path: "internal/store/store.go", Range: &rpc.Range{Start: rpc.Position{Line: 3, Character: 1}, End: rpc.Position{Line: 3, Character: 11}}, Text: "return nil"},
		rpc.InputPart{Type: "diagnostics", Path: "internal/store/store.go", Items: []rpc.DiagnosticItem{{Range: rng, Severity: "warning", Message: "Save never fails", Source: "staticcheck"}}},
		rpc.InputPart{Type: "resource", URI: "untitled:Untitled-1", MimeType: "text/markdown", Text: "Saves must survive a crash."},
		rpc.InputPart{Type: "image", MimeType: "image/png", Data: png},
	)
	completed(ed, tid)
	ed.CallErr("session/configure", rpc.SessionConfigureParams{SessionID: sid, Effort: ptr("max")})
	ed.MustCall("session/configure", rpc.SessionConfigureParams{SessionID: sid, Model: ptr("local")}, nil)
	ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Parts: []rpc.InputPart{{Type: "text", Text: "and this?"}, {Type: "image", MimeType: "image/png", Data: png}}})
	e.Model.Script(modeltest.Reply{Text: []string{"## Asked\nIs Save atomic?\n## Decided\nWrite a temp file and rename it.\n## Changed\nNothing yet.\n## Still open\nThe change itself."}})
	ed.MustCall("session/compact", rpc.SessionIDParams{SessionID: sid}, nil)
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, nil)

	notices := map[string]bool{"instructions": true, "compacting": true, "compaction": true}
	g.addWire(ed.Wire(), func(method string, m map[string]any) bool {
		switch method {
		case rpc.MethodModelsList, rpc.MethodSessionConfigure, rpc.MethodSessionCompact, rpc.NotifyTurnReasoning, rpc.NotifyTurnUsage,
			"session/new", "session/resume", "turn/started":
			return true
		case "turn/start":
			p, _ := m["params"].(map[string]any)
			_, parts := p["input"].([]any)
			return parts
		case "notice":
			p, _ := m["params"].(map[string]any)
			return notices[fmt.Sprint(p["source"])]
		}
		return false
	})
}

// /model and /compact run as commands through turn/start.
func TestModelAndCompactCommands(t *testing.T) {
	e := newEnv(t)
	e.settings(twoModels(e, 100000))
	ed := e.connect()
	sid := openSession(t, ed, rpc.SessionNewParams{}).Session.SessionID
	var res rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/model"}, &res)
	if res.Command == nil || !strings.Contains(res.Command.Text, "Model: mock-1. Models: mock-1, local.") || res.TurnID != "" {
		t.Fatalf("/model: %+v", res.Command)
	}
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/model mock-1 high"}, &res)
	if !strings.Contains(res.Command.Text, "Model: mock-1 (effort high).") {
		t.Errorf("/model mock-1 high: %+v", res.Command)
	}
	if code, msg := ed.CallErr("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/model nope"}); code != rpc.CodeInvalidParams || !strings.Contains(msg, `no model "nope"`) {
		t.Errorf("/model nope: %d %q", code, msg)
	}
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/compact"}, &res)
	if !strings.Contains(res.Command.Text, "Nothing to summarise") {
		t.Errorf("/compact of a new session: %+v", res.Command)
	}
	e.Model.Script(modeltest.Reply{Text: []string{"hi"}}, modeltest.Reply{Text: []string{"## Asked\nhello"}})
	completed(ed, start(t, ed, sid, "hello"))
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "/compact"}, &res)
	if !strings.Contains(res.Command.Text, "Summarised the conversation") || !strings.Contains(fmt.Sprint(res.Command.Result), "true") {
		t.Errorf("/compact: %+v", res.Command)
	}
	if reqs := e.Model.Requests(); reqs[0].Effort() != "high" {
		t.Errorf("the turn after /model asked effort %q", reqs[0].Effort())
	}
}
