//go:build linux

package chat_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/kin-dev/kin/agent/modeltest"
)

// openPTY opens a pseudo-terminal pair with nothing but the syscall package.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		m.Close()
		t.Skipf("ptsname: %v", errno)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	return m, s
}

// The real binary at a terminal: Ctrl-C (a real SIGINT from the terminal's
// line discipline) cancels the streaming turn without touching the service,
// which answers the next question; a second Ctrl-C at the idle prompt exits.
func TestBinaryTerminalCtrlC(t *testing.T) {
	bin := kin(t)
	e := newEnv(t)
	hold := make(chan struct{})
	defer close(hold)
	e.model.Script(
		modeltest.Reply{Text: []string{"Thinking", " for ever"}, Hold: hold},
		modeltest.Reply{Text: []string{"second ", "answer"}},
	)
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(bin, "chat")
	cmd.Dir, cmd.Env = e.ws, append(e.binEnv(), "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	screen := newBuffer()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				_, _ = screen.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	// The screen as a person reads it: no colours, no carriage returns.
	plain := func() string { return strings.ReplaceAll(ansi.ReplaceAllString(screen.String(), ""), "\r", "") }
	await := func(substr string, n int) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		for {
			changed := screen.next()
			if strings.Count(plain(), substr) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %q (x%d) on the terminal:\n%s", substr, n, plain())
			}
			select {
			case <-changed:
			case <-time.After(time.Until(deadline)):
			}
		}
	}
	typeIn := func(s string) {
		t.Helper()
		if _, err := master.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}

	await("You> ", 1)
	if !strings.Contains(screen.String(), "\x1b[1mYou> ") {
		t.Errorf("no colour on a terminal: %q", screen.String())
	}
	typeIn("think hard\r")
	await("Assistant> Thinking", 1)
	typeIn("\x03") // Ctrl-C
	await("[turn cancelled]", 1)
	await("You> ", 2)
	typeIn("again\r")
	await("Assistant> second answer", 1)
	await("You> ", 3)
	typeIn("\x03")
	await("(Ctrl-C again to exit, or /quit)", 1)
	typeIn("\x03")
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("kin chat exited with %v:\n%s", waitErr, plain())
		}
	case <-time.After(timeout):
		t.Fatalf("kin chat did not exit after the second Ctrl-C:\n%s", plain())
	}
}
