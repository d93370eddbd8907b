package connect_test

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"

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
