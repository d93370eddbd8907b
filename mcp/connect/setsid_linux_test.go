package connect_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/reaper"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A stdio server's child that left the server's process group with
// setsid() is stopped with the server, and reaped (kin is its subreaper,
// as kin serve is).
func TestStdioSetsidChildStoppedWithTheServer(t *testing.T) {
	if err := reaper.Enable(); err != nil {
		t.Fatal(err)
	}
	srv := mcptest.Stdio(t, "setsid-sleeper", nil)
	c, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv})
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(text(t, c.Session, "child_pid"))
	if err != nil || child == 0 {
		t.Fatalf("child pid: %v", err)
	}
	if !alive(child) {
		t.Fatal("the setsid child is not running before Close")
	}
	c.Close()
	if _, err := os.Stat("/proc/" + strconv.Itoa(child)); !os.IsNotExist(err) {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("the server's setsid child %d survived Close (alive=%v)", child, alive(child))
	}
}

// An unconfined stdio server leads a session of its own, and so has no
// controlling terminal: under kin chat (kin serve in the person's
// terminal's session) a server that prompts on /dev/tty wrote over the
// person's screen, and its read stopped it.
func TestStdioServerLeadsASessionOfItsOwn(t *testing.T) {
	srv := mcptest.Stdio(t, "files", nil)
	c, err := connect.Dial(context.Background(), srv, connect.Options{Env: kinEnv})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "/proc/self/stat"}})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("read: %v", err)
	}
	stat := res.Content[0].(*mcp.TextContent).Text
	pid, _, _ := strings.Cut(strings.TrimPrefix(stat, "read: "), " ")
	// after the command's name: state, ppid, pgrp, session
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 4 || f[3] != pid {
		t.Fatalf("the server (pid %s) is not a session leader: %q", pid, stat)
	}
}
