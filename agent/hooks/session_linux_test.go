package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/lockedfile"
	"github.com/kin-dev/kin/agent/sandbox"
)

// An unconfined hook leads a session of its own, and so has no controlling
// terminal: under kin chat (kin serve in the person's terminal's session)
// a hook that prompts on /dev/tty wrote over the person's screen, and its
// read stopped it until its timeout.
func TestAnUnconfinedHookLeadsASessionOfItsOwn(t *testing.T) {
	kinHome, ws, r := setup(t)
	r.Sandbox = sandbox.New(sandbox.Config{Mode: sandbox.ModeOff})
	// /proc/$$/stat after the command's name: state, ppid, pgrp, session
	write(t, filepath.Join(kinHome, "settings.json"), config("UserPromptSubmit", "",
		`set -- $(sed 's/.*) //' /proc/$$/stat); echo "pid=$$ session=$4"`, 0), 0o600)
	hs := hooks.Load(kinHome, []string{ws}).For(hooks.UserPromptSubmit, "")
	if len(hs) != 1 {
		t.Fatal(hs)
	}
	res := r.Run(context.Background(), hs[0], hooks.Input{SessionID: "s1", Cwd: ws, Prompt: "hi"})
	pid, session, ok := strings.Cut(strings.TrimPrefix(res.Context, "pid="), " session=")
	if !ok || pid == "" || pid != session {
		t.Fatalf("the hook is not a session leader: %+v", res)
	}
}

// The person's settings.json as a FIFO is a problem with the hooks, not a
// hang: kin read it with os.ReadFile, which waits in open(2) for a writer.
func TestAPersonsSettingsFileThatIsAFIFOIsAProblemNotAHang(t *testing.T) {
	kinHome, ws, _ := setup(t)
	if err := syscall.Mkfifo(filepath.Join(kinHome, "settings.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan hooks.Config, 1)
	go func() { done <- hooks.Load(kinHome, []string{ws}) }()
	select {
	case c := <-done:
		if len(c.Problems) != 1 || !strings.Contains(c.Problems[0], "named pipe") {
			t.Fatalf("problems %q", c.Problems)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading the hooks waits on the FIFO")
	}
}

// The attack: another kin (stopped, or busy setting up its own commands)
// holds the lock on the placeholders of the sandbox's run folder. A
// confined hook's set-up waited for it up to 10 s whatever its own
// timeout and whether the turn was cancelled: the person's stop left the
// turn hanging. The set-up now ends with the hook's timeout or the turn.
func TestAConfinedHookSetUpStopsWaitingWhenTheTurnIsCancelled(t *testing.T) {
	kinHome, ws, r := setup(t)
	run := t.TempDir()
	r.Sandbox = sandbox.New(sandbox.Config{Mode: sandbox.ModeAuto, Hidden: []string{kinHome}, RunDir: run})
	if !r.Sandbox.Status().Confined {
		t.Skip("no sandbox here")
	}
	f, err := os.OpenFile(filepath.Join(run, "placeholders.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockedfile.LockExclusive(f); err != nil {
		t.Fatal(err)
	}
	defer lockedfile.Unlock(f)
	write(t, filepath.Join(kinHome, "settings.json"), config("UserPromptSubmit", "", "echo hi", 0), 0o600)
	hs := hooks.Load(kinHome, []string{ws}).For(hooks.UserPromptSubmit, "")
	if len(hs) != 1 {
		t.Fatal(hs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := r.Run(ctx, hs[0], hooks.Input{SessionID: "s1", Cwd: ws, Prompt: "hi"})
	// (the wait this ends was 10 s; a loaded machine gets room to notice)
	if d := time.Since(start); d > 7*time.Second {
		t.Errorf("the hook's set-up waited %v after the turn was cancelled: %+v", d, res)
	}
	if res.Failure == "" {
		t.Errorf("the hook ran without its sandbox's set-up: %+v", res)
	}
}
