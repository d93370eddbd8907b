//go:build linux

package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/tool"
)

// Another kin (sharing $KIN_HOME) holds the lock on the sandbox's
// placeholders and does not let go: a bash command waiting to be set up
// stops waiting when the turn is cancelled, does not run, and says why.
// (A flock on another open of the lock file, in this process, contends as
// another kin's would.)
func TestSandboxCancelWhileAnotherKinHoldsTheLock(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	t.Cleanup(sandbox.Settle) // the placeholders' removal writes in run: before it goes
	opts := confined(t, sandbox.Config{RunDir: run})
	root, env := workspace(t)
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(run, "placeholders.lock")
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockedfile.LockExclusive(f); err != nil {
		t.Fatal(err)
	}
	a, err := prepareWith(t, "bash", opts, env, map[string]any{"command": "touch ran"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	go func() { done <- a.Run(ctx, nil) }()
	// cancelled once the command's set-up waits for the lock (its own open
	// of the lock file beside the test's), not after a fixed 300 ms: on a
	// loaded machine the turn could end before the command started
	for deadline := time.Now().Add(30 * time.Second); opens(lock) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			lockedfile.Unlock(f)
			<-done
			t.Fatal("the command's set-up never waited for the lock")
		}
	}
	cancel()
	var r tool.Result
	select {
	case r = <-done:
	case <-time.After(8 * time.Second):
		lockedfile.Unlock(f) // let the command's set-up end before the test does
		<-done
		t.Fatal("the command still waited for the lock after the turn was cancelled")
	}
	wantStatus(t, r, tool.StatusFailed)
	wantContains(t, r.Output, "the sandbox could not be set up, so the command did not run", "cancelled while waiting for the lock", lock)
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Fatal("the command ran")
	}
	if entries, _ := os.ReadDir(root); len(entries) > 0 {
		t.Errorf("the workspace holds %v: a placeholder made or left by a command that did not run", entries)
	}

	// once the other kin lets go, commands run again
	lockedfile.Unlock(f)
	_, r = runIn(t, opts, env, map[string]any{"command": "touch ran"})
	wantStatus(t, r, tool.StatusCompleted)
	if _, err := os.Stat(filepath.Join(root, "ran")); err != nil {
		t.Fatalf("the command did not run once the lock was free: %v", err)
	}
}

// opens counts this process's open files that are name.
func opens(name string) int {
	if real, err := filepath.EvalSymlinks(name); err == nil {
		name = real
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == name {
			n++
		}
	}
	return n
}
