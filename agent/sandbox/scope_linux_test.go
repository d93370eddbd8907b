//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kin-dev/kin/agent/sandbox/scopetest"
)

// scopedSandbox is a sandbox whose commands start scoped. It skips only
// where that cannot be: no working bwrap, or a kernel without Landlock ABI
// 6; anywhere else a sandbox without the scope is the defect tested for.
func scopedSandbox(t *testing.T) *Sandbox {
	t.Helper()
	sb := New(Config{Hidden: []string{t.TempDir()}})
	st := sb.Status()
	if !st.Confined {
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatalf("no sandbox: %s", st.Reason)
		}
		t.Skip("no sandbox here: " + st.Reason)
	}
	if abi := landlockABI(); abi < scopeABI {
		t.Skipf("the kernel's Landlock ABI is %d; scoping abstract unix sockets needs %d", abi, scopeABI)
	}
	if st.Note != "" {
		t.Fatalf("the kernel has Landlock ABI %d, yet: %s", landlockABI(), st.Note)
	}
	return sb
}

// abstractProbe is what the helper reports: whether it can connect to an
// abstract socket it listens on itself, and to the host's.
func abstractProbe(host string) string {
	self := "ok"
	name := "@" + scopetest.Name("self")
	if l, err := net.Listen("unix", name); err != nil {
		self = "listen: " + err.Error()
	} else {
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Close()
			}
		}()
		if c, err := net.DialTimeout("unix", name, 5*time.Second); err != nil {
			self = "dial: " + err.Error()
		} else {
			c.Close()
		}
		l.Close()
	}
	reached := "host=connected"
	if c, err := net.DialTimeout("unix", "@"+host, 5*time.Second); err != nil {
		reached = "host=refused (" + err.Error() + ")"
	} else {
		c.Close()
	}
	return "self=" + self + " " + reached
}

// TestAbstractHelper is the command of the scope tests (run as the test
// binary, inside the sandbox).
func TestAbstractHelper(t *testing.T) {
	host := os.Getenv("KIN_ABSTRACT_HOST")
	if host == "" {
		t.Skip("the command of the scope tests")
	}
	fmt.Println("PROBE " + abstractProbe(host))
}

// helperBinary is a copy of the test binary outside /tmp (which a confined
// command sees as a private, empty one).
func helperBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "kin-scope-")
	if err != nil {
		t.Skipf("no folder outside /tmp for the helper: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// A confined command with network cannot connect to an abstract socket
// the host listens on (X11's @/tmp/.X11-unix/X0 is one), while one it
// makes itself works.
func TestScopeKeepsHostAbstractSocketsOut(t *testing.T) {
	sb := scopedSandbox(t)
	bin := helperBinary(t)
	host, conns := scopetest.Listen(t)
	// the host's socket is reachable from outside the domain: the test's
	// listener works, so a refusal below is the scope's
	if c, err := net.Dial("unix", "@"+host); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
		<-conns
	}
	dir := t.TempDir()
	cmd, cleanup, err := sb.Command(Policy{Writable: []string{dir}, Network: true}, dir,
		append(os.Environ(), "KIN_ABSTRACT_HOST="+host), bin, "-test.run=^TestAbstractHelper$", "-test.v")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "PROBE self=ok host=refused") {
		t.Fatalf("the confined command with network:\n%s", out.String())
	}
	select {
	case <-conns:
		t.Fatal("the host's abstract socket accepted a connection from the confined command")
	default:
	}
}

// The start of a confined command through the scoped thread must not tie
// it to the goroutine (or thread) that asked for it: bubblewrap dies with
// the thread that forked it (--die-with-parent is a parent-death signal,
// armed once bwrap set up), and a caller's thread may end right after.
// Here the caller's thread ends for sure (a goroutine that ends locked
// takes its thread along; not the main thread, which the runtime keeps),
// after the command answered once, and the command still answers.
func TestScopedStartOutlivesItsCaller(t *testing.T) {
	sb := scopedSandbox(t)
	dir := t.TempDir()
	cmd, cleanup, err := sb.Command(Policy{Writable: []string{dir}, Network: true}, dir, os.Environ(), "/bin/cat")
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 2)
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	answers := func(what string) error {
		if _, err := fmt.Fprintln(stdin, what); err != nil {
			return fmt.Errorf("the command is gone: %v", err)
		}
		select {
		case got := <-lines:
			if got != what+"\n" {
				return fmt.Errorf("the command answered %q (it died?)", got)
			}
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the command does not answer")
		}
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	type caller struct {
		tid int
		err error
	}
	// The caller is a goroutine locked to a thread other than the main one.
	// One that finds itself on the main thread keeps it, locked, while
	// another asks: that one then runs on another thread. (Starting a new
	// goroutine until one did not land on the main thread could go on for
	// ever: with GOMAXPROCS=1 each ran where the last one had.)
	var attempt func(done chan<- caller)
	attempt = func(done chan<- caller) {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if tid := unix.Gettid(); tid != unix.Getpid() {
			err := sb.Start(cmd)
			if err == nil {
				err = answers("set up") // bwrap's parent-death signal is armed by now
			}
			done <- caller{tid, err}
			return
		}
		other := make(chan caller)
		go attempt(other)
		c := <-other
		runtime.UnlockOSThread()
		done <- c
	}
	done := make(chan caller)
	go attempt(done)
	c := <-done
	if c.err != nil {
		t.Fatal(c.err)
	}
	task := fmt.Sprintf("/proc/self/task/%d", c.tid)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(task); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the caller's thread did not end")
		}
	}
	time.Sleep(100 * time.Millisecond) // a parent-death signal would have landed
	if err := answers("still here"); err != nil {
		t.Fatal(err)
	}
}

// withProbe runs f with the probe's decision forced afresh and the
// scope's hooks as f sets them, restoring all after.
func withProbe(t *testing.T, f func()) {
	t.Helper()
	probes.mu.Lock()
	saved := probes.done
	probes.done = nil
	probes.mu.Unlock()
	abi, start := landlockABI, startScoped
	defer func() {
		landlockABI, startScoped = abi, start
		probes.mu.Lock()
		probes.done = saved
		probes.mu.Unlock()
	}()
	f()
}

// Where the scope cannot be had, commands still run confined, without
// it, and the status says so (Note, the start-up notice): a kernel
// without Landlock ABI 6, or a bubblewrap that fails when started scoped
// (setuid, an AppArmor transition) while it works unscoped.
func TestScopeFallback(t *testing.T) {
	if st := New(Config{}).Status(); !st.Confined {
		t.Skip("no sandbox here: " + st.Reason)
	}
	cases := []struct {
		name  string
		abi   func() int
		start func(*exec.Cmd) error
		want  string
	}{
		{"no landlock", func() int { return 0 }, nil, "the kernel has no Landlock"},
		{"abi 5", func() int { return 5 }, nil, "the kernel's Landlock ABI is 5"},
		{"the scope cannot be set up", func() int { return 7 }, func(*exec.Cmd) error { return errors.New("simulated: landlock_restrict_self: EPERM") }, "simulated: landlock_restrict_self"},
		{"bwrap fails scoped", func() int { return 7 }, func(cmd *exec.Cmd) error {
			// what a setuid bwrap does under no_new_privs: it starts, and fails
			cmd.Path, cmd.Args = "/bin/sh", []string{"sh", "-c", "echo 'bwrap: simulated: setuid lost' >&2; exit 1"}
			return cmd.Start()
		}, "bwrap: simulated: setuid lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withProbe(t, func() {
				landlockABI = c.abi
				scopedCalls := 0
				startScoped = func(cmd *exec.Cmd) error {
					scopedCalls++
					if c.start == nil {
						t.Error("started scoped where the kernel lacks the scope")
						return cmd.Start()
					}
					return c.start(cmd)
				}
				sb := New(Config{Hidden: []string{t.TempDir()}})
				st := sb.Status()
				if !st.Confined {
					t.Fatalf("the fallback left commands unconfined: %s", st.Reason)
				}
				for _, want := range []string{"abstract unix sockets are not scoped", c.want} {
					if !strings.Contains(st.Note, want) {
						t.Errorf("the note does not say %q: %q", want, st.Note)
					}
				}
				if sum := st.Summary(); !strings.Contains(sum, "Commands run confined (bubblewrap), but abstract unix sockets are not scoped") {
					t.Errorf("the start-up notice: %q", sum)
				}
				// and a command runs confined, not through the scope
				before := scopedCalls
				dir := t.TempDir()
				cmd, cleanup, err := sb.Command(Policy{Writable: []string{dir}, Network: true}, dir, os.Environ(), "/bin/sh", "-c", "echo ok")
				if err != nil {
					t.Fatal(err)
				}
				defer cleanup()
				if filepath.Base(cmd.Path) != "bwrap" {
					t.Fatalf("not confined: %s", cmd.Path)
				}
				var out strings.Builder
				cmd.Stdout = &out
				if err := sb.Start(cmd); err != nil {
					t.Fatal(err)
				}
				if err := cmd.Wait(); err != nil || out.String() != "ok\n" {
					t.Fatalf("%v %q", err, out.String())
				}
				if scopedCalls != before {
					t.Error("a command was started scoped after the probe decided against it")
				}
			})
		})
	}
}

// Only the sandbox's own commands go through the scope: anything else
// handed to Start (an unconfined command) is started as it is, without
// no_new_privs (sudo keeps working there).
func TestScopeOnlyForConfinedCommands(t *testing.T) {
	scopedSandbox(t)
	withProbe(t, func() {
		calls := 0
		startScoped = func(cmd *exec.Cmd) error { calls++; return cmd.Start() }
		sb := New(Config{Hidden: []string{t.TempDir()}})
		if st := sb.Status(); st.Note != "" {
			t.Fatal(st.Note)
		}
		probed := calls
		if probed != 1 {
			t.Errorf("the probe started %d commands scoped, want 1", probed)
		}
		cmd := exec.Command("/bin/sh", "-c", "grep NoNewPrivs /proc/self/status")
		var out strings.Builder
		cmd.Stdout = &out
		if err := sb.Start(cmd); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if calls != probed || !strings.Contains(out.String(), "\t0") {
			t.Errorf("an unconfined command went through the scope: %q", out.String())
		}
		dir := t.TempDir()
		cmd, cleanup, err := sb.Command(Policy{Writable: []string{dir}}, dir, os.Environ(), "true")
		if err != nil {
			t.Fatal(err)
		}
		defer cleanup()
		if err := sb.Start(cmd); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if calls != probed+1 {
			t.Error("a confined command did not go through the scope")
		}
	})
}

// Concurrent starts queue on the one scoped thread: each gets its own
// answer, and each command is scoped.
func TestScopedStartsConcurrently(t *testing.T) {
	sb := scopedSandbox(t)
	bin := helperBinary(t)
	host, conns := scopetest.Listen(t)
	const n = 8
	outs := make([]strings.Builder, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			dir := t.TempDir()
			cmd, cleanup, err := sb.Command(Policy{Writable: []string{dir}, Network: true}, dir,
				append(os.Environ(), "KIN_ABSTRACT_HOST="+host), bin, "-test.run=^TestAbstractHelper$")
			if err != nil {
				errs <- err
				return
			}
			defer cleanup()
			cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
			if err := sb.Start(cmd); err != nil {
				errs <- err
				return
			}
			errs <- cmd.Wait()
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for i := range outs {
		if !strings.Contains(outs[i].String(), "PROBE self=ok host=refused") {
			t.Errorf("command %d: %s", i, outs[i].String())
		}
	}
	select {
	case <-conns:
		t.Fatal("the host's abstract socket accepted a connection from a confined command")
	default:
	}
}
