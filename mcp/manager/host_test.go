package manager_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

func TestMain(m *testing.M) { mcptest.Main(m) }

// host records everything the Manager tells it.
type host struct {
	mu       sync.Mutex
	decision string // answer to every launch approval ("" = trust)
	launches []manager.LaunchRequest
	statuses []manager.Status
	notices  []string
	revoked  []string
	elicits  []manager.ElicitRequest
	answer   func(manager.ElicitRequest) manager.ElicitResult
}

func (h *host) ApproveLaunch(_ context.Context, r manager.LaunchRequest) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.launches = append(h.launches, r)
	if h.decision == "" {
		return manager.DecisionTrust, nil
	}
	return h.decision, nil
}

func (h *host) Elicit(_ context.Context, r manager.ElicitRequest) (manager.ElicitResult, error) {
	h.mu.Lock()
	h.elicits = append(h.elicits, r)
	f := h.answer
	h.mu.Unlock()
	if f == nil {
		return manager.ElicitResult{Action: "decline"}, nil
	}
	return f(r), nil
}

func (h *host) Status(s manager.Status) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.statuses = append(h.statuses, s)
}

func (h *host) Notice(level, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notices = append(h.notices, level+": "+msg)
}

// RevokeGrant records revocations of every grant of a key (a redefined
// tool); the host holds no grants, so nothing is ever removed.
func (h *host) RevokeGrant(key, keep string) bool {
	if keep != "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.revoked = append(h.revoked, key)
	return false
}

// all returns everything recorded, as JSON, for secret canaries.
func (h *host) all() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, _ := json.Marshal([]any{h.launches, h.statuses, h.notices, h.revoked, h.elicits})
	return string(b)
}

func (h *host) noticesWith(sub string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.notices {
		if strings.Contains(n, sub) {
			out = append(out, n)
		}
	}
	return out
}

func (h *host) launchCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.launches)
}

// env is the Manager's environment: a small PATH and a secret.
func env(extra map[string]string) func(string) (string, bool) {
	m := map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/nonexistent", "LANG": "C"}
	for k, v := range extra {
		m[k] = v
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// setup writes <kinHome>/mcp.json and returns a Manager over it.
func setup(t *testing.T, h *host, servers map[string]any, extraEnv map[string]string) (*manager.Manager, string) {
	t.Helper()
	return setupWith(t, servers, manager.Options{Host: h, Env: env(extraEnv)})
}

// setupWith is a manager with o (its Workdir and KinHome new folders, Env
// env(nil) unless set) over servers in the home's mcp.json, closed when the
// test ends.
func setupWith(t *testing.T, servers map[string]any, o manager.Options) (*manager.Manager, string) {
	t.Helper()
	o.KinHome, o.Workdir = t.TempDir(), t.TempDir()
	if o.Env == nil {
		o.Env = env(nil)
	}
	writeConfig(t, o.KinHome, servers)
	m := manager.New(o)
	t.Cleanup(m.Close)
	return m, o.KinHome
}

// patientConnect bounds connects in setupPatient.
const patientConnect = 2 * time.Minute

// setupPatient is setup for tests whose connects take long on a loaded
// machine (Node starting an npm server, a megabyte's tool list under the
// race detector), past connect.ConnectTimeout, when what they test is not
// that bound: connects are bounded by patientConnect.
func setupPatient(t *testing.T, h *host, servers map[string]any) *manager.Manager {
	t.Helper()
	m, _ := setupWith(t, servers, manager.Options{Host: h, ConnectTimeout: patientConnect})
	return m
}

func writeConfig(t *testing.T, home string, servers map[string]any) {
	t.Helper()
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func stdioEntry(t *testing.T, name string) map[string]any {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: name}}
}

func state(m *manager.Manager, name string) manager.Row {
	for _, r := range m.List().Servers {
		if r.Name == name {
			return r
		}
	}
	return manager.Row{}
}

func toolNamed(m *manager.Manager, name string) *calltool.Tool {
	for _, t := range m.Tools() {
		if t.Spec().Name == name {
			if ct, ok := t.(*calltool.Tool); ok {
				return ct
			}
		}
	}
	return nil
}

// eventually polls f for up to a minute.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a guard against a hang: a loaded machine is slow
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func run(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	a, err := tl.Prepare(context.Background(), tool.Env{SessionID: "s1", TurnID: "t1", CallID: "c1"}, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return a.Run(context.Background(), nil)
}
