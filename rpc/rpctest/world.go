package rpctest

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
)

// World is one test's surroundings for a kin server: a scripted model, a
// private KIN_HOME, a workspace, and the environment kin sees.
type World struct {
	T     testing.TB
	Model *modeltest.Server
	Home  string
	WS    string
	Vars  map[string]string
	// Sandbox confines the built-in tools' commands and is what the server
	// reports; nil is sandbox.Default().
	Sandbox *sandbox.Sandbox
}

// NewWorld builds a World whose model is configured (with a canary key).
func NewWorld(t testing.TB) *World {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	return &World{T: t, Model: m, Home: t.TempDir(), WS: ws,
		Vars: map[string]string{"OPENAI_API_KEY": "sk-test-canary", "OPENAI_BASE_URL": m.URL(), "KIN_MODEL": "mock-1"}}
}

// Options are server options for this World, with the built-in tools.
func (w *World) Options() rpc.Options {
	return rpc.Options{
		Home:    w.Home,
		Getenv:  func(k string) string { return w.Vars[k] },
		Cwd:     w.WS,
		Version: "test",
		Logger:  zaptest.NewLogger(w.T),
		Tools: func([]string) []tool.Tool {
			return builtin.Tools(builtin.Options{Sandbox: w.Sandbox, KinHome: w.Home})
		},
		Sandbox: w.Sandbox,
	}
}

// Write creates a workspace file and returns its path.
func (w *World) Write(name, content string) string {
	w.T.Helper()
	p := filepath.Join(w.WS, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.T.Fatal(err)
	}
	return p
}
