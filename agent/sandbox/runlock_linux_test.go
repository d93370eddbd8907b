//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/lockedfile"
)

// lockHolderEnv makes the test binary hold the lock of the run folder it
// names (TestLockHolderHelper).
const lockHolderEnv = "KIN_SANDBOX_LOCK_HOLDER"

// TestLockHolderHelper is not a test: run as a child of the test binary
// with lockHolderEnv set to a run folder, it is a kin holding that
// folder's lock (runLock): it says "locked" once it holds it, and lets go
// (ends) when its input closes or a line comes.
func TestLockHolderHelper(t *testing.T) {
	run := os.Getenv(lockHolderEnv)
	if run == "" {
		t.Skip("only run as a child of the runLock tests")
	}
	f, err := os.OpenFile(filepath.Join(run, "placeholders.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := lockedfile.LockExclusive(f); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
}

// holder is another process holding run's lock.
type holder struct{ *child }

// holdRunLock starts a process holding run's lock until letGo (or the
// test's end).
func holdRunLock(t *testing.T, run string) *holder {
	t.Helper()
	if err := os.MkdirAll(run, 0o700); err != nil {
		t.Fatal(err)
	}
	h := &holder{startChild(t, "TestLockHolderHelper", lockHolderEnv+"="+run)}
	h.await(t, "locked")
	go io.Copy(io.Discard, h.out)
	return h
}

// child is this test binary run as one of its helpers (a test that only
// acts when its variable is set): tell is its input, said its output.
type child struct {
	cmd  *exec.Cmd
	tell io.WriteCloser
	out  io.Reader
	said *bufio.Scanner
}

// startChild starts the helper test name with env added, killed when the
// test ends (and should the test die first: a stopped child reads no
// more input).
func startChild(t *testing.T, name string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	tell, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, tell: tell, out: out, said: bufio.NewScanner(out)}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	return c
}

// await reads the child's output up to the line word.
func (c *child) await(t *testing.T, word string) {
	t.Helper()
	for c.said.Scan() {
		if c.said.Text() == word {
			return
		}
	}
	t.Fatalf("%s ended before saying %q", c.cmd.Args[1], word)
}

// stop stops the holder (as Ctrl-Z would), with the lock held.
func (h *holder) stop(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(h.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !isStopped(h.cmd.Process.Pid); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the holder never stopped")
		}
	}
}

// letGo resumes the holder and has it end, which lets the lock go.
func (h *holder) letGo(t *testing.T) {
	t.Helper()
	syscall.Kill(h.cmd.Process.Pid, syscall.SIGCONT)
	io.WriteString(h.tell, "go\n")
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("the lock holder: %v", err)
	}
}

// returnsWithin runs f, failing the test if it has not returned after d (runLock
// waiting for ever).
func returnsWithin(t *testing.T, d time.Duration, what string, f func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	start := time.Now()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("%s still waits after %v", what, d)
		return 0
	}
}

// placeholderHold holds one missing path, p, under key ws, as a command's
// placeholder.
func placeholderHold(ctx context.Context, ws, run, p string) (func(), bool, error) {
	return hold(ctx, []string{p}, map[string]string{p: ws}, nil, run, func(string) string { return "p" })
}

// ourMarker is this process's marker for key ws in run.
func ourMarker(run, ws string) string {
	return filepath.Join(markerDir(run, ws), strconv.Itoa(os.Getpid()))
}

// A kin stopped (Ctrl-Z, SIGSTOP) while holding the lock on the run
// folder: a hold gives up after the bound with a word naming the lock
// file and the stopped kin, records and counts nothing (the command must
// not run); a hold queued behind it does not wait the whole bound again;
// once the kin lets go, holds work again.
func TestAHoldGivesUpOnAStoppedKinsLock(t *testing.T) {
	t.Cleanup(setLockWaits(time.Second, 50*time.Millisecond, 50*time.Millisecond)) // after the holder ends (cleanups run last first)
	run, ws := t.TempDir(), t.TempDir()
	p := filepath.Join(ws, ".mcp.json")
	h := holdRunLock(t, run)
	h.stop(t)

	var err error
	var release func()
	waited := returnsWithin(t, 20*time.Second, "a hold", func() { release, _, err = placeholderHold(context.Background(), ws, run, p) })
	var le *LockError
	if !errors.As(err, &le) || release != nil {
		t.Fatalf("a hold without the lock: %v (release %v)", err, release != nil)
	}
	if waited < time.Second {
		t.Errorf("gave up after %v, before the bound", waited)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{filepath.Join(run, "placeholders.lock"), "another kin process (pid " + strconv.Itoa(h.cmd.Process.Pid) + ") is stopped while holding it", "kill -CONT " + strconv.Itoa(h.cmd.Process.Pid)} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message does not say %q: %s", want, msg)
		}
	}
	if _, err := os.Stat(ourMarker(run, ws)); !os.IsNotExist(err) {
		t.Errorf("a refused hold recorded its placeholder: %v", err)
	}
	placeholders.Lock()
	if placeholders.keys[ws] != 0 || placeholders.paths[ws] != nil {
		t.Errorf("a refused hold is counted: %d %v", placeholders.keys[ws], placeholders.paths[ws])
	}
	placeholders.Unlock()

	// the next one, queued behind the first, gives up after the grace
	waited = returnsWithin(t, 20*time.Second, "a second hold", func() { _, _, err = placeholderHold(context.Background(), ws, run, p) })
	if !errors.As(err, &le) {
		t.Fatalf("a second hold without the lock: %v", err)
	}
	if waited >= 900*time.Millisecond {
		t.Errorf("a hold after one gave up waited %v, the whole bound again", waited)
	}

	h.letGo(t)
	release, standing, err := placeholderHold(context.Background(), ws, run, p)
	if err != nil || !standing {
		t.Fatalf("a hold once the kin let go: %v, standing %v", err, standing)
	}
	if err := os.Mkdir(p, 0o755); err != nil { // bubblewrap's mount point
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ourMarker(run, ws)); !strings.Contains(string(b), p) {
		t.Errorf("the hold did not record its placeholder: %q", b)
	}
	release()
	Settle()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("the placeholder stayed after the release: %v", err)
	}
}

// A release (the last command on a key ending) while another kin holds
// the lock keeps the placeholder and the marker recording it (removing
// either unlocked could take a path from under another kin's command), and
// neither it nor the settle point waits past the bound; the next release
// once the lock is free removes them.
func TestAReleaseKeepsItsPlaceholdersWhileTheLockIsHeld(t *testing.T) {
	t.Cleanup(setLockWaits(500*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond)) // after the holder ends (cleanups run last first)
	run, ws := t.TempDir(), t.TempDir()
	p := filepath.Join(ws, ".mcp.json")
	release, _, err := placeholderHold(context.Background(), ws, run, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	h := holdRunLock(t, run)
	h.stop(t)
	waited := returnsWithin(t, 20*time.Second, "a release and the settle point", func() {
		release()
		Settle()
	})
	if waited < 500*time.Millisecond {
		t.Errorf("the release ended after %v, before the bound: it did not wait for the lock", waited)
	}
	if _, err := os.Lstat(p); err != nil {
		t.Errorf("the placeholder went without the lock: %v", err)
	}
	if b, _ := os.ReadFile(ourMarker(run, ws)); !strings.Contains(string(b), p) {
		t.Errorf("the marker went without the lock: %q", b)
	}

	h.letGo(t)
	// the next command on the key, and its release
	release, _, err = placeholderHold(context.Background(), ws, run, p)
	if err != nil {
		t.Fatal(err)
	}
	release()
	Settle()
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("the placeholder stayed after a release with the lock free: %v", err)
	}
	if _, err := os.Stat(ourMarker(run, ws)); !os.IsNotExist(err) {
		t.Errorf("the marker stayed after a release with the lock free: %v", err)
	}
	placeholders.Lock()
	defer placeholders.Unlock()
	if len(placeholders.leftover) > 0 || placeholders.paths[ws] != nil {
		t.Errorf("still kept: %v %v", placeholders.leftover, placeholders.paths[ws])
	}
}

// A release of another key once the lock is free retries what a release
// left when it was not: the leftover goes too.
func TestTheNextReleaseRemovesWhatOneLeft(t *testing.T) {
	t.Cleanup(setLockWaits(300*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond)) // after the holder ends (cleanups run last first)
	run, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	p, q := filepath.Join(ws, ".mcp.json"), filepath.Join(other, ".envrc")
	release, _, err := placeholderHold(context.Background(), ws, run, p)
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(p, 0o755)
	h := holdRunLock(t, run)
	returnsWithin(t, 20*time.Second, "a release and the settle point", func() {
		release()
		Settle()
	})
	h.letGo(t)
	if _, err := os.Lstat(p); err != nil {
		t.Fatalf("the placeholder went without the lock: %v", err)
	}
	release, _, err = placeholderHold(context.Background(), other, run, q)
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(q, 0o755)
	release()
	Settle()
	for _, gone := range []string{p, q, ourMarker(run, ws), ourMarker(run, other)} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s stayed: %v", gone, err)
		}
	}
}

// A sweep (a kin starting) while another kin holds the lock keeps a killed
// kin's marker and placeholder, and waits sweepWait at most: kin sweeps on
// the way to answering initialize. The next sweep removes them.
func TestASweepWaitsLittleAndKeepsWhatItFinds(t *testing.T) {
	t.Cleanup(setLockWaits(time.Second, 50*time.Millisecond, 200*time.Millisecond)) // after the holder ends (cleanups run last first)
	run, ws := t.TempDir(), t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true")
	}
	p := filepath.Join(ws, ".mcp.json")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(markerDir(run, ws), strconv.Itoa(dead.Process.Pid))
	os.MkdirAll(filepath.Dir(marker), 0o700)
	if err := os.WriteFile(marker, []byte("p\t"+p+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := holdRunLock(t, run)
	waited := returnsWithin(t, 20*time.Second, "a sweep", func() { Sweep(run) })
	if waited >= time.Second {
		t.Errorf("the sweep waited %v", waited)
	}
	for _, kept := range []string{p, marker} {
		if _, err := os.Lstat(kept); err != nil {
			t.Errorf("%s went without the lock: %v", kept, err)
		}
	}
	h.letGo(t)
	Sweep(run)
	for _, gone := range []string{p, marker} {
		if _, err := os.Lstat(gone); !os.IsNotExist(err) {
			t.Errorf("%s stayed after a sweep with the lock free: %v", gone, err)
		}
	}
}

// The turn cancelled while its command waits for the lock: the wait ends
// at once, and the next hold still waits the whole bound (a cancelled
// wait says nothing of the other kin).
func TestACancelledTurnStopsWaitingForTheLock(t *testing.T) {
	t.Cleanup(setLockWaits(10*time.Second, 50*time.Millisecond, 50*time.Millisecond)) // after the holder ends (cleanups run last first)
	run, ws := t.TempDir(), t.TempDir()
	p := filepath.Join(ws, ".mcp.json")
	holdRunLock(t, run)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var err error
	waited := returnsWithin(t, 5*time.Second, "a cancelled hold", func() { _, _, err = placeholderHold(ctx, ws, run, p) })
	var le *LockError
	if !errors.As(err, &le) || !le.Cancelled || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("a cancelled hold: %v", err)
	}
	if waited > 2*time.Second {
		t.Errorf("the cancelled hold waited %v", waited)
	}
	stalled.Lock()
	_, marked := stalled.since[run]
	stalled.Unlock()
	if marked {
		t.Error("a cancelled wait counted the lock as stalled")
	}
}

// A lock another kin holds for a moment (its own hold or release) is
// waited for and taken, not refused; a free one is taken at once.
func TestALockHeldForAMomentIsWaitedFor(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	p := filepath.Join(ws, ".mcp.json")
	h := holdRunLock(t, run)
	time.AfterFunc(200*time.Millisecond, func() { io.WriteString(h.tell, "go\n") })
	var err error
	var release func()
	returnsWithin(t, 20*time.Second, "a hold", func() { release, _, err = placeholderHold(context.Background(), ws, run, p) })
	if err != nil {
		t.Fatalf("a hold waiting for a lock held for a moment: %v", err)
	}
	release()
	Settle()
	start := time.Now()
	release, _, err = placeholderHold(context.Background(), ws, run, p)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a hold with the lock free took %v", d)
	}
	release()
	Settle()
	if _, err := os.Stat(ourMarker(run, ws)); !os.IsNotExist(err) {
		t.Errorf("the marker stayed: %v", err)
	}
}

// A command set up while another kin, stopped, holds the lock does not
// run, and leaves nothing: no placeholder made, no marker. Once the kin
// lets go, the next command runs with its placeholders, which go after.
func TestACommandDoesNotRunWithoutTheLock(t *testing.T) {
	root, home, sb := confinedWorkspace(t)
	t.Cleanup(setLockWaits(500*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond)) // after the holder ends (cleanups run last first)
	run := filepath.Join(home, "run")
	h := holdRunLock(t, run)
	h.stop(t)
	p := workspacePolicy(t, sb, root, home)
	var err error
	var cmd *exec.Cmd
	returnsWithin(t, 20*time.Second, "a command's set-up", func() {
		cmd, _, err = sb.CommandContext(context.Background(), p, root, os.Environ(), "/bin/sh", "-c", "touch ran")
	})
	var le *LockError
	if !errors.As(err, &le) || cmd != nil {
		t.Fatalf("a command set up without the lock: %v", err)
	}
	if !strings.Contains(err.Error(), "stopped while holding it") {
		t.Errorf("the message: %v", err)
	}
	Settle()
	if left := leftovers(root); len(left) > 0 {
		t.Errorf("a command that did not run left %v", left)
	}
	if markers, _ := filepath.Glob(filepath.Join(run, "placeholders", "*", "*")); len(markers) > 0 {
		t.Errorf("a command that did not run left markers: %v", markers)
	}

	h.letGo(t)
	cmd, end := workspaceCommand(t, sb, root, home, "test -d AGENTS.md && touch ran")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the command once the lock was free: %v\n%s", err, out)
	}
	end()
	Settle()
	if _, err := os.Stat(filepath.Join(root, "ran")); err != nil {
		t.Error("the command did not run once the lock was free")
	}
	if left := leftovers(root); len(left) > 0 {
		t.Errorf("left after the settle point: %v", left)
	}
}

// The word for a holder not known to be stopped (hung in a write, or not
// found in /proc/locks) says it seems stopped, and names it when known.
func TestLockErrorWords(t *testing.T) {
	for _, c := range []struct {
		e    LockError
		want []string
	}{
		{LockError{Name: "/k/run/placeholders.lock", Held: 10 * time.Second},
			[]string{"(/k/run/placeholders.lock) has been held for over 10s: another kin process seems stopped while holding it", "kill -CONT with its pid"}},
		{LockError{Name: "/k/run/placeholders.lock", Held: 10 * time.Second, PID: 42},
			[]string{"another kin process (pid 42) seems stopped while holding it", "kill -CONT 42"}},
		{LockError{Name: "/k/run/placeholders.lock", PID: 42, Cancelled: true},
			[]string{"cancelled while waiting for the lock on the sandbox's placeholders (/k/run/placeholders.lock), which another kin process (pid 42) holds"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.e.Error(), w) {
				t.Errorf("%q lacks %q", c.e.Error(), w)
			}
		}
	}
}
