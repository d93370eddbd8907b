package connect_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var kinEnv = env(map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/kin", "LANG": "C.UTF-8", "SECRET_KIN_VAR": "leak"})

func text(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"query": "hi"}})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestStdioEchoAndMinimalEnv(t *testing.T) {
	srv := mcptest.Stdio(t, "echo", map[string]string{"API_TOKEN": "tok-123"})
	c, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := text(t, c.Session, "echo"); got != "echo: hi" {
		t.Fatalf("echo = %q", got)
	}
	vars := map[string]bool{}
	for _, kv := range strings.Split(text(t, c.Session, "env"), "\n") {
		k, _, _ := strings.Cut(kv, "=")
		vars[k] = true
	}
	for _, want := range []string{"PATH", "HOME", "LANG", "API_TOKEN", mcptest.EnvServer} {
		if !vars[want] {
			t.Errorf("child env lacks %s", want)
		}
	}
	if len(vars) != 5 {
		t.Errorf("child env has extra variables: %v", vars)
	}
}

func alive(pid int) bool {
	state, _, ok := reaper.ProcState(pid)
	return ok && state != 'Z' && state != 'X'
}

func TestStdioProcessGroupReaped(t *testing.T) {
	srv := mcptest.Stdio(t, "sleeper", nil)
	c, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv})
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(text(t, c.Session, "child_pid"))
	if err != nil || child == 0 {
		t.Fatalf("child pid: %v", err)
	}
	leader := c.Pid()
	if !alive(leader) || !alive(child) {
		t.Fatal("server or child not running before Close")
	}
	c.Close()
	if alive(leader) {
		t.Error("server still running after Close")
	}
	// Close returns once nothing of the server runs: no waiting here.
	if alive(child) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Error("the server's child (sleep) survived Close")
	}
	// The leader was reaped by us: no zombie left under this pid.
	if _, _, ok := reaper.ProcState(leader); ok {
		t.Error("server leader not reaped")
	}
}

func TestStdioDiscoverProbeFallback(t *testing.T) {
	srv := mcptest.Stdio(t, "discover-exit", nil)
	c, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ProtocolVersion != connect.LegacyProtocolVersion {
		t.Errorf("protocol %q, want %q", c.ProtocolVersion, connect.LegacyProtocolVersion)
	}
	if got := text(t, c.Session, "echo"); got != "echo: hi" {
		t.Fatalf("echo = %q", got)
	}
}

func TestStdioFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  config.Server
		kind connect.Kind
	}{
		{"bad command", config.Server{Name: "bad", Transport: config.TransportStdio, Command: "kin-no-such-command"}, connect.KindSpawn},
		{"crash", mcptest.Stdio(t, "crash", nil), connect.KindConnect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := connect.Dial(context.Background(), tc.srv, connect.Options{Env: kinEnv})
			var ce *connect.Error
			if !errors.As(err, &ce) || ce.Kind != tc.kind {
				t.Fatalf("err = %v, want kind %s", err, tc.kind)
			}
		})
	}
}

// A stdio server that writes a banner, a blank line and log lines on stdout
// around its messages connects and works; each skipped line is logged.
// One that writes nothing but noise fails to connect, without waiting out
// the connect timeout.
func TestStdioNoiseOnStdout(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	c, err := connect.Dial(context.Background(), mcptest.Stdio(t, "banner", nil), connect.Options{Env: kinEnv, Logger: zap.New(core)})
	if err != nil {
		t.Fatalf("a server with a banner was dropped: %v", err)
	}
	defer c.Close()
	for range 3 {
		if got := text(t, c.Session, "echo"); got != "echo: hi" {
			t.Fatalf("echo = %q", got)
		}
	}
	var skipped []string
	for _, e := range logs.All() {
		skipped = append(skipped, e.ContextMap()["line"].(string))
	}
	if len(skipped) < 2 || skipped[0] != "Starting Time MCP server..." || skipped[1] != `{"level":30,"msg":"listening on stdio"}` ||
		!slices.Contains(skipped, "handled a message") {
		t.Errorf("logged %q", skipped)
	}

	_, err = connect.Dial(context.Background(), mcptest.Stdio(t, "garbage", nil), connect.Options{Env: kinEnv, Timeout: time.Minute})
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Kind != connect.KindConnect || !strings.Contains(err.Error(), "not JSON-RPC messages") {
		t.Fatalf("a server that writes only noise: %v", err)
	}
}

// Attack: a server prints its secret (an env value kin gave it) on stdout
// in lines of noise, after padding, so that the log line (cut to 200
// characters) and the connect error (the last line, cut to 80) would each
// keep the first part of it: a cut secret no longer matches the
// redaction. Redacted first, nothing of it is written.
func TestStdioNoiseHidesTheServersSecretWhole(t *testing.T) {
	const secret = "sk-CANARY-0123456789abcdefghij"
	core, logs := observer.New(zap.WarnLevel)
	srv := mcptest.Stdio(t, "leaky-noise", map[string]string{"KIN_MCPTEST_SECRET": secret})
	_, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv, Logger: zap.New(core), Timeout: time.Minute})
	if err == nil {
		t.Fatal("a server that writes only noise connected")
	}
	written := []string{err.Error()}
	for _, e := range logs.All() {
		written = append(written, e.ContextMap()["line"].(string))
	}
	if len(written) < 10 {
		t.Fatalf("logged %d lines", len(written))
	}
	part := secret[:6] // "sk-CAN": what a cut would keep of it
	for _, w := range written {
		if strings.Contains(w, part) {
			t.Fatalf("a part of the secret was written: %q", w)
		}
	}
}
