package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// The test binary doubles as the stdio MCP servers of mcptest: kin serve
// starts it with KIN_MCPTEST_SERVER set.
func init() { mcptest.ServeIfAsked() }

// killSleep kills pid if it is still one of the test's sleeps (never
// anything else that came to have its number).
func killSleep(pid int) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.HasPrefix(string(b), "sleep\x00") {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// procAlive: pid runs (exists and is not a zombie).
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// bashTurn starts kin serve, runs one turn whose model calls bash with
// command (approved once), and returns kin and the pid the command printed
// as "pid=N" (from the streamed output). Commands run unconfined: a
// confined one's PID namespace dies with it (nothing to reap), and its pids
// are not the host's.
func bashTurn(t *testing.T, command string, then ...modeltest.Reply) (*proc, int) {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	args, _ := json.Marshal(map[string]string{"command": command})
	m.Script(append([]modeltest.Reply{{Calls: []modeltest.Call{{ID: "c1", Name: "bash", Arguments: string(args)}}}}, then...)...)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"sandbox": "off"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL(), "KIN_HOME="+home, "HOME="+home)
	p.send(req(1, "initialize", map[string]any{"processId": os.Getpid()}))
	p.until(idIs(1))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	p.send(req(2, "session/new", nil))
	sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "run it"}))
	ap := p.until(func(m map[string]any) bool { return m["method"] == "approval/request" })
	rid := ap["params"].(map[string]any)["requestId"]
	p.send(req(4, "approval/respond", map[string]any{"requestId": rid, "decision": "allow_once"}))
	var out strings.Builder
	p.until(func(m map[string]any) bool {
		if m["method"] != "turn/toolCall" {
			return false
		}
		d, _ := m["params"].(map[string]any)["outputDelta"].(string)
		out.WriteString(d)
		_, rest, ok := strings.Cut(out.String(), "pid=")
		return ok && strings.Contains(rest, "\n")
	})
	_, rest, _ := strings.Cut(out.String(), "pid=")
	pid, err := strconv.Atoi(strings.Fields(rest)[0])
	if err != nil {
		t.Fatalf("pid in %q: %v", out.String(), err)
	}
	t.Cleanup(func() { killSleep(pid) })
	return p, pid
}

// exitKin sends shutdown and exit and waits for kin to end.
func exitKin(t *testing.T, p *proc) {
	t.Helper()
	p.send(req(90, "shutdown", nil))
	p.until(idIs(90))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// kin shuts down during a command that started a process with setsid():
// the command is stopped, and so is the process that left its group.
func TestBinaryShutdownStopsWhatACommandSetsidStarted(t *testing.T) {
	p, pid := bashTurn(t, "setsid sleep 1000 & echo pid=$!; sleep 1000")
	if !procAlive(pid) {
		t.Fatal("the setsid sleep is not running before shutdown")
	}
	exitKin(t, p)
	if procAlive(pid) {
		t.Fatalf("the setsid sleep %d outlived kin", pid)
	}
}

// A process that also drops kin's marker from its environment may be out
// of what kin can attribute to its command (kin may still have seen the
// marker before the exec that dropped it), so it may outlive the call; it
// is below kin (its subreaper) either way, so it does not outlive kin.
func TestBinaryShutdownLeavesNothingBelowKin(t *testing.T) {
	p, pid := bashTurn(t, "env -u KIN_PROC_OWNER setsid sleep 1000 >/dev/null 2>&1 & echo pid=$!",
		modeltest.Reply{Text: []string{"done"}})
	p.until(func(m map[string]any) bool { return m["method"] == "turn/completed" })
	t.Logf("after the call, the unmarked sleep runs: %v", procAlive(pid))
	exitKin(t, p)
	if procAlive(pid) {
		t.Fatalf("the unmarked sleep %d outlived kin", pid)
	}
}

// kin shuts down while a stdio MCP server runs whose child left the
// server's process group with setsid(): the server and its child go.
func TestBinaryShutdownStopsWhatAnMCPServerSetsidStarted(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		// unconfined: the test looks at the server's child by its pid, which
		// the sandbox's own process namespace would renumber
		"sl": map[string]any{"command": exe, "env": map[string]string{mcptest.EnvServer: "setsid-sleeper"}, "sandbox": "off"},
	}})
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	m := modeltest.New()
	t.Cleanup(m.Close)
	m.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "mcp__sl__child_pid"}}}, modeltest.Reply{Text: []string{"ok"}})
	p := startServe(t, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+m.URL(), "KIN_HOME="+home, "HOME="+home)
	p.send(req(1, "initialize", map[string]any{"processId": os.Getpid()}))
	p.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	id := 100
	approve := func(m map[string]any) {
		if m["method"] == "approval/request" {
			id++
			p.send(req(id, "approval/respond", map[string]any{"requestId": m["params"].(map[string]any)["requestId"], "decision": "allow_once"}))
		}
	}
	p.until(func(m map[string]any) bool {
		approve(m)
		par, _ := m["params"].(map[string]any)
		return m["method"] == "mcp/status" && par["server"] == "sl" && par["state"] == "connected"
	})
	p.send(req(2, "session/new", nil))
	sid := p.until(idIs(2))["result"].(map[string]any)["session"].(map[string]any)["sessionId"]
	p.send(req(3, "turn/start", map[string]any{"sessionId": sid, "input": "child?"}))
	var output string
	p.until(func(m map[string]any) bool {
		approve(m)
		par, _ := m["params"].(map[string]any)
		if m["method"] == "turn/toolCall" && par["status"] == "completed" {
			output, _ = par["output"].(string)
		}
		return m["method"] == "turn/completed"
	})
	found := regexp.MustCompile(`(\d+)\s*</untrusted-mcp-result>`).FindStringSubmatch(output)
	if found == nil {
		t.Fatalf("no child pid in %q", output)
	}
	pid, _ := strconv.Atoi(found[1])
	t.Cleanup(func() { killSleep(pid) })
	if !procAlive(pid) {
		t.Fatal("the server's setsid child is not running before shutdown")
	}
	exitKin(t, p)
	if procAlive(pid) {
		t.Fatalf("the MCP server's setsid child %d outlived kin", pid)
	}
}
