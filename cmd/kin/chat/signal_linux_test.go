//go:build linux

package chat_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/reaper"
)

// kin chat keeps the terminal raw while it runs. Ended by SIGTERM (kill, a
// supervisor, timeout(1)) in the middle of a turn, it gives the terminal
// back as it was (echo, lines, no bracketed paste) and exits 143: the
// person's shell is not left without echo.
func TestBinaryEditorSIGTERMRestoresTheTerminal(t *testing.T) {
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.Model.Script(modeltest.Reply{Text: []string{"Thinking"}, Hold: hold})
	term := e.terminal(t)
	term.awaitPrompt("You> ")
	tio, err := unix.IoctlGetTermios(int(term.master.Fd()), unix.TCGETS)
	if err != nil {
		t.Skipf("no termios through the pty's master: %v", err)
	}
	if tio.Lflag&unix.ECHO != 0 {
		t.Fatal("the terminal is not raw while kin chat runs")
	}
	term.typeIn("think\r")
	term.await("Assistant> Thinking", 1)
	service := reaper.Descendants(term.cmd.Process.Pid)
	if len(service) == 0 {
		t.Fatal("kin chat runs no service")
	}
	if err := term.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = term.waitExit()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Errorf("kin chat exited with %v, want 143", err)
	}
	// kin chat waits for its service to end: one still running wrote the
	// session and the day's usage after kin chat had gone
	for _, pid := range service {
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
			t.Errorf("process %d of kin chat's service still runs after kin chat exited: %s", pid, stat)
		}
	}
	tio, err = unix.IoctlGetTermios(int(term.master.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&(unix.ECHO|unix.ICANON|unix.ISIG) != unix.ECHO|unix.ICANON|unix.ISIG {
		t.Errorf("the terminal was left raw (lflag %#x)", tio.Lflag)
	}
	// the bytes kin chat wrote last may still be on their way from the
	// pty to the test's reader: wait for them a while
	pasteOn := func() bool {
		raw := term.raw.String()
		return strings.LastIndex(raw, "\x1b[?2004h") > strings.LastIndex(raw, "\x1b[?2004l")
	}
	for end := time.Now().Add(timeout); time.Now().Before(end); {
		changed := term.raw.next()
		if !pasteOn() {
			break
		}
		select {
		case <-changed:
		case <-time.After(time.Until(end)):
		}
	}
	if pasteOn() {
		t.Error("bracketed paste was left on")
	}
}
