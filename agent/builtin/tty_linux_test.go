package builtin_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/ptytest"
)

// A command runs with no controlling terminal, confined or not. kin chat
// starts kin serve in its own process group but in the terminal's session,
// as an editor started from a terminal does; an unconfined command was put
// in a process group of its own in that session, so /dev/tty was still the
// person's terminal: `git push` over ssh with a passphrase, sudo or a gpg
// pinentry wrote its prompt over kin chat's screen, and its read of the
// terminal, from a background process group, stopped it (SIGTTIN) until
// the timeout killed it, two minutes later. In a session of its own it has
// no terminal to open, and such a program fails at once, saying why.
func TestBashHasNoControllingTerminal(t *testing.T) {
	if os.Getenv("KIN_TEST_TTY_HELPER") == "1" {
		return // the helper's run is TestBashHasNoControllingTerminalHelper
	}
	master, slave := ptytest.Open(t)
	defer master.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBashHasNoControllingTerminalHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "KIN_TEST_TTY_HELPER=1")
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &out
	// the helper leads a session whose controlling terminal is the pty, as
	// kin serve under kin chat is in the person's terminal's session
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var screen lockedBuffer
	go func() { _, _ = io.Copy(&screen, master) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not end:\n%s", out.String())
	}
	if strings.Contains(screen.String(), "prompt-on-the-terminal") {
		t.Errorf("the command wrote on the person's terminal: %q", screen.String())
	}
	wantContains(t, out.String(), "HELPER-RESULT", "exit status")
	wantNotContains(t, out.String(), "killed by kin after the timeout")
}

// TestBashHasNoControllingTerminalHelper is the helper process: it runs a
// command that writes to and reads from /dev/tty, and prints the result.
func TestBashHasNoControllingTerminalHelper(t *testing.T) {
	if os.Getenv("KIN_TEST_TTY_HELPER") != "1" {
		t.Skip("run by TestBashHasNoControllingTerminal")
	}
	r, _ := runBash(t, context.Background(), unconfined, map[string]any{
		"command": "echo prompt-on-the-terminal >/dev/tty; read x </dev/tty", "timeout": 5})
	fmt.Printf("HELPER-RESULT %s\n%s\n", r.Status, r.Output)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
