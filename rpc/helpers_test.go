package rpc_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// env is one test's world: a mock model, a KIN_HOME and a workspace.
type env struct {
	t     *testing.T
	model *modeltest.Server
	home  string
	ws    string
	vars  map[string]string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	ws := t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	return &env{t: t, model: m, home: t.TempDir(), ws: ws,
		vars: map[string]string{"OPENAI_API_KEY": "sk-test-canary", "OPENAI_BASE_URL": m.URL(), "KIN_MODEL": "mock-1"}}
}

func (e *env) options() rpc.Options {
	return rpc.Options{
		Home:    e.home,
		Getenv:  func(k string) string { return e.vars[k] },
		Cwd:     e.ws,
		Version: "test",
		Logger:  zaptest.NewLogger(e.t),
		Tools: func(roots []string) []tool.Tool {
			return builtin.Tools(builtin.Options{})
		},
	}
}

// editor starts a server and an initialized editor with one new session.
func (e *env) editor() (*rpctest.Editor, string) {
	e.t.Helper()
	ed := rpctest.Start(e.t, e.options())
	ed.Initialize(e.ws)
	var res rpc.SessionResult
	ed.MustCall("session/new", rpc.SessionNewParams{}, &res)
	return ed, res.Session.SessionID
}

func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.ws, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// start begins a turn and returns its id.
func start(t *testing.T, ed *rpctest.Editor, sid, input string) string {
	t.Helper()
	var res rpc.TurnStartResult
	ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: input}, &res)
	if res.TurnID == "" {
		t.Fatal("turn/start returned no turnId")
	}
	return res.TurnID
}

// completed waits for the turn's turn/completed.
func completed(ed *rpctest.Editor, turnID string) map[string]any {
	return ed.Wait("turn/completed", rpctest.Field("turnId", turnID))
}

// answerApprovals answers every approval/request with decide's decision.
func answerApprovals(ed *rpctest.Editor, decide func(req map[string]any) string) {
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "approval/request" {
			return
		}
		var req map[string]any
		_ = jsonUnmarshal(n.Params, &req)
		d := decide(req)
		if d == "" {
			return
		}
		go ed.Call("approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: d}, nil)
	})
}
