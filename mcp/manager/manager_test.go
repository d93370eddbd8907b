package manager_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A working stdio server connects while a broken command and an offline
// http server are reported unavailable.
func TestStartWorkingBrokenOffline(t *testing.T) {
	off := httptest.NewServer(http.NotFoundHandler())
	offURL := off.URL + "/mcp"
	off.Close()
	h := &host{}
	m, _ := setup(t, h, map[string]any{
		"echo":    stdioEntry(t, "echo"),
		"broken":  map[string]any{"command": "kin-no-such-command-xyz"},
		"offline": map[string]any{"type": "http", "url": offURL},
		"off":     map[string]any{"command": "true", "disabled": true},
	}, nil)
	m.Start(context.Background())
	if r := state(m, "echo"); r.State != manager.StateConnected || r.Tools != 3 {
		t.Fatalf("echo: %+v", r)
	}
	for _, name := range []string{"broken", "offline"} {
		r := state(m, name)
		if r.State != manager.StateUnavailable || r.LastError == "" {
			t.Errorf("%s: %+v", name, r)
		}
		if len(h.noticesWith("MCP server "+name+" unavailable")) != 1 {
			t.Errorf("%s: no unavailable notice in %v", name, h.notices)
		}
	}
	if !strings.Contains(state(m, "broken").LastError, "not found") {
		t.Errorf("broken reason: %q", state(m, "broken").LastError)
	}
	if r := state(m, "off"); r.State != manager.StateDisabled || r.Enabled {
		t.Errorf("off: %+v", r)
	}
	if r := run(t, toolNamed(m, "mcp__echo__echo"), `{"query":"x"}`); r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "echo: x") {
		t.Fatalf("echo call: %+v", r)
	}
	checks := m.Check(context.Background(), "")
	ready := map[string]bool{}
	for _, c := range checks {
		ready[c.Name] = c.Ready
	}
	if !ready["echo"] || ready["broken"] || ready["offline"] || len(checks) != 4 {
		t.Errorf("check: %+v", checks)
	}
}

// Nothing is contacted before approval; deny, allow once and trust behave.
func TestLaunchApproval(t *testing.T) {
	raw := &mcptest.Raw{}
	ts := mcptest.ServeHTTPHandler(t, raw)
	servers := map[string]any{"api": map[string]any{"type": "http", "url": ts.URL + "/mcp"}}

	h := &host{decision: manager.DecisionDeny}
	m, home := setup(t, h, servers, nil)
	hits := 0
	ts.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++; raw.ServeHTTP(w, r) })
	m.Start(context.Background())
	if r := state(m, "api"); r.State != manager.StateDenied || hits != 0 || len(h.launches) != 1 {
		t.Fatalf("deny: %+v, %d requests", r, hits)
	}
	lr := h.launches[0]
	if lr.Server != "api" || lr.Transport != "http" || lr.Destination != ts.URL+"/mcp" || lr.Scope != "global" {
		t.Fatalf("launch request %+v", lr)
	}

	h.decision = manager.DecisionAllowOnce
	if err := m.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := state(m, "api"); r.State != manager.StateConnected || r.Trusted {
		t.Fatalf("allow once: %+v", r)
	}
	// A new process asks again: allow_once was not persisted.
	h2 := &host{decision: manager.DecisionTrust}
	m2 := manager.New(manager.Options{Workdir: t.TempDir(), KinHome: home, Host: h2, Env: env(nil)})
	defer m2.Close()
	m2.Start(context.Background())
	if h2.launchCount() != 1 || state(m2, "api").State != manager.StateConnected {
		t.Fatalf("second process: %d launches, %+v", h2.launchCount(), state(m2, "api"))
	}
	// Trusted now: a third process connects silently.
	h3 := &host{decision: manager.DecisionDeny}
	m3 := manager.New(manager.Options{Workdir: t.TempDir(), KinHome: home, Host: h3, Env: env(nil)})
	defer m3.Close()
	m3.Start(context.Background())
	if h3.launchCount() != 0 || state(m3, "api").State != manager.StateConnected || !state(m3, "api").Trusted {
		t.Fatalf("trusted: %d launches, %+v", h3.launchCount(), state(m3, "api"))
	}
}

// Apply keeps unchanged servers, re-prompts changed ones, stops removed ones.
func TestApply(t *testing.T) {
	a, b := &mcptest.Raw{}, &mcptest.Raw{}
	ta, tb := mcptest.ServeHTTPHandler(t, a), mcptest.ServeHTTPHandler(t, b)
	h := &host{}
	m, home := setup(t, h, map[string]any{
		"a": map[string]any{"type": "http", "url": ta.URL},
		"b": map[string]any{"type": "http", "url": tb.URL},
	}, nil)
	m.Start(context.Background())
	if h.launchCount() != 2 {
		t.Fatalf("launches %d", h.launchCount())
	}
	before := toolNamed(m, "mcp__a__echo")
	writeConfig(t, home, map[string]any{
		"a": map[string]any{"type": "http", "url": ta.URL},
		"c": map[string]any{"type": "http", "url": tb.URL + "/other"},
	})
	if err := m.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.launchCount() != 3 || h.launches[2].Server != "c" {
		t.Fatalf("launches after apply: %+v", h.launches)
	}
	if toolNamed(m, "mcp__a__echo") != before {
		t.Error("unchanged server a was reconnected")
	}
	if toolNamed(m, "mcp__b__echo") != nil || state(m, "b").Name != "" {
		t.Error("removed server b still offered")
	}
	stopped := false
	for _, s := range h.statuses {
		stopped = stopped || (s.Server == "b" && s.State == manager.StateStopped)
	}
	if !stopped {
		t.Error("no stopped status for b")
	}
	// Changing a's launch identity asks again, and says so.
	writeConfig(t, home, map[string]any{
		"a": map[string]any{"type": "http", "url": ta.URL + "/v2"},
		"c": map[string]any{"type": "http", "url": tb.URL + "/other"},
	})
	if err := m.Apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.launchCount() != 4 || h.launches[3].Server != "a" || !h.launches[3].Changed {
		t.Fatalf("changed a: %+v", h.launches)
	}
}

// Close stops a stdio server's whole process group.
func TestCloseReapsProcessGroup(t *testing.T) {
	h := &host{}
	m, _ := setup(t, h, map[string]any{"sl": stdioEntry(t, "sleeper")}, nil)
	m.Start(context.Background())
	r := run(t, toolNamed(m, "mcp__sl__child_pid"), `{}`)
	i := strings.Index(r.Output, "instructions.\n")
	child, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(r.Output[i+len("instructions.\n"):], "</untrusted-mcp-result>")))
	if err != nil {
		t.Fatalf("child pid from %q: %v", r.Output, err)
	}
	m.Close() // returns once nothing of the server runs
	if st, _, ok := reaper.ProcState(child); ok && st != 'Z' {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatal("child survived Close")
	}
	if len(m.Tools()) != 0 {
		t.Error("tools offered after Close")
	}
}

// Secrets from headers and env never reach approvals, statuses, notices,
// List rows or tool approvals.
func TestSecretCanary(t *testing.T) {
	const canary = "CANARY-s3cr3t-42"
	echoBack := mcptest.ServeHTTPHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "rejected "+r.Header.Get("Authorization")+" "+r.URL.RawQuery, http.StatusUnauthorized)
	}))
	raw := &mcptest.Raw{}
	good := mcptest.ServeHTTPHandler(t, raw)
	h := &host{}
	stdio := stdioEntry(t, "echo")
	stdio["env"].(map[string]string)["API_KEY"] = "${TOKEN}"
	m, _ := setup(t, h, map[string]any{
		"rejecting": map[string]any{"type": "http", "url": echoBack.URL + "/mcp?key=${TOKEN}", "headers": map[string]string{"Authorization": "Bearer ${TOKEN}"}},
		"good":      map[string]any{"type": "http", "url": good.URL + "/mcp", "headers": map[string]string{"X-Api-Key": "${TOKEN}"}},
		"stdio":     stdio,
		"bad":       map[string]any{"command": "no-such-${TOKEN}", "env": map[string]string{"K": "${TOKEN}"}},
	}, map[string]string{"TOKEN": canary})
	m.Start(context.Background())
	if st := state(m, "rejecting"); st.State != manager.StateNeedsLogin {
		t.Errorf("rejecting: %+v", st)
	}
	if st := state(m, "good"); st.State != manager.StateConnected {
		t.Fatalf("good: %+v", st)
	}
	a, err := toolNamed(m, "mcp__good__echo").Prepare(context.Background(), tool.Env{}, json.RawMessage(`{"q":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := json.Marshal(m.List())
	approval, _ := json.Marshal(a.Approval)
	checks, _ := json.Marshal(m.Check(context.Background(), ""))
	for what, s := range map[string]string{"host": h.all(), "list": string(rows), "approval": string(approval), "check": string(checks)} {
		if strings.Contains(s, canary) {
			t.Errorf("secret in %s: %s", what, s)
		}
	}
	if !strings.Contains(string(rows), "Bearer ●●●●") {
		t.Errorf("masked header missing from rows: %s", rows)
	}
}

// Close while a stdio server is still starting (it has not answered
// initialize) returns only once that start has ended and the server's
// process is reaped: else kin could exit, and a test's TempDir be removed,
// with the process it spawned still running. The server ignores SIGTERM
// and its stdin, so stopping it takes the whole stop sequence, seconds
// that Close must wait for.
func TestCloseWaitsForAServerStillStarting(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	entry := stdioEntry(t, "mute")
	entry["env"].(map[string]string)["KIN_MCPTEST_PROBE"] = pidFile
	h := &host{}
	m, _ := setup(t, h, map[string]any{"mute": entry}, nil)
	started := make(chan struct{})
	go func() {
		defer close(started)
		m.Start(context.Background())
	}()
	var pid int
	eventually(t, "the server's pid", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	m.Close()
	select {
	case <-started:
	default:
		t.Error("Close returned while Start was still connecting the server")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the server (pid %d) was not reaped when Close returned (signal 0: %v)", pid, err)
	}
	<-started
	if st := state(m, "mute"); st.State == manager.StateConnected {
		t.Fatalf("connected after Close: %+v", st)
	}
}
