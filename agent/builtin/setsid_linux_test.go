package builtin_test

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/kin-dev/kin/agent/tool"
)

// gone: no process, not even a zombie (kin reaped what it adopted).
func gone(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return os.IsNotExist(err)
}

func killLeft(t *testing.T, pid int, what string) {
	t.Helper()
	if !gone(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("%s: %d survived the call (alive=%v)", what, pid, alive(pid))
	}
}

// A process the command starts with setsid() leaves its process group; it
// is stopped (and reaped) all the same when the command ends. Unconfined:
// a confined command's PID namespace ends with it anyway, and its pids are
// not the host's.
func TestBashSetsidChildStoppedWhenTheCommandEnds(t *testing.T) {
	for _, cmd := range []string{
		"setsid sleep 1000 & echo pid=$!",                               // holds the output pipe
		"setsid sleep 1000 >/dev/null 2>&1 & echo pid=$!",               // does not
		"(setsid sleep 1000 >/dev/null 2>&1 & echo pid=$!) ; sleep 0.2", // orphaned while the command runs
	} {
		r, _ := runBash(t, context.Background(), unconfined, map[string]any{"command": cmd})
		wantStatus(t, r, tool.StatusCompleted)
		wantContains(t, r.Output, "exit status 0", "left running in the background were stopped")
		killLeft(t, pidIn(t, r.Output), cmd)
	}
}

func TestBashSetsidChildStoppedOnCancel(t *testing.T) {
	r, pid := runUntilCancelled(t, "setsid sleep 1000 & echo pid=$!; sleep 1000")
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "killed by kin after the turn was cancelled")
	killLeft(t, pid, "cancelled command")
}
