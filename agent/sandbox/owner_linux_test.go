//go:build linux

package sandbox

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/reaper"
)

// ownerHelperEnv makes the test binary wait on its input (TestOwnerHelper):
// a process named as kin is.
const ownerHelperEnv = "KIN_SANDBOX_OWNER_HELPER"

// TestOwnerHelper is not a test: run as a child of the test binary with
// ownerHelperEnv set, it waits until its input closes.
func TestOwnerHelper(t *testing.T) {
	if os.Getenv(ownerHelperEnv) == "" {
		t.Skip("only run as a child of TestAMarkerOfAKinNamedProcessStays")
	}
	io.Copy(io.Discard, os.Stdin)
}

// started starts a process that runs until the test ends, and returns its
// pid.
func started(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// markAs writes a marker for key in run as pid's, recording an empty
// placeholder folder it makes at each of paths, written at the time when
// (the time now when zero).
func markAs(t *testing.T, run, key string, pid int, when time.Time, paths ...string) string {
	t.Helper()
	if !localTimes(run) {
		t.Skipf("%s is on a file system not known to stamp times with this machine's clock", run)
	}
	dir := markerDir(run, key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := ""
	for _, p := range paths {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		lines += "p\t" + p + "\n"
	}
	name := filepath.Join(dir, strconv.Itoa(pid))
	if err := os.WriteFile(name, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if !when.IsZero() {
		if err := os.Chtimes(name, when, when); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// A killed kin's marker whose pid another process got since (one started
// after the marker was last written) is a killed kin's marker: the next
// kin sweeps what it records, as for a pid no process has. The marker of
// a process that started before it was written is a live kin's: what it
// records stays.
func TestAMarkerOfAPidReusedSinceIsSwept(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	past := time.Now().Add(-time.Hour)
	reused := started(t, exec.Command("sleep", "30"))
	left := filepath.Join(ws, ".mcp.json")
	dead := markAs(t, run, filepath.Join(ws, "a"), reused, past, left)

	liveWS := t.TempDir()
	owner := started(t, exec.Command("sleep", "30"))
	kept := filepath.Join(liveWS, ".mcp.json")
	live := markAs(t, run, liveWS, owner, time.Time{}, kept)

	Sweep(run)
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("the placeholder of a kin whose pid was reused stayed: %v", err)
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("the marker of a kin whose pid was reused stayed: %v", err)
	}
	if _, err := os.Lstat(kept); err != nil {
		t.Errorf("a live kin's placeholder was swept: %v", err)
	}
	if _, err := os.Lstat(live); err != nil {
		t.Errorf("a live kin's marker was swept: %v", err)
	}
}

// A release (the last command of this kin on a key ending) removes what a
// killed kin whose pid was reused since records, with its own
// placeholders, and leaves what a live kin records though this kin held
// it too.
func TestAReleaseRemovesWhatAMarkerOfAReusedPidRecords(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	reused := started(t, exec.Command("sleep", "30"))
	left := filepath.Join(ws, ".envrc")
	markAs(t, run, filepath.Join(ws, "b"), reused, time.Now().Add(-time.Minute), left)
	owner := started(t, exec.Command("sleep", "30"))
	shared := filepath.Join(ws, ".vscode")
	markAs(t, run, filepath.Join(ws, "c"), owner, time.Time{}, shared)

	mine := filepath.Join(ws, ".mcp.json")
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{mine: ws, shared: ws}
	release, standing, err := hold(context.Background(), []string{mine}, keys, []string{shared}, run, func(string) string { return "p" })
	if err != nil {
		t.Fatal(err)
	}
	if !standing {
		t.Fatal("a standing placeholder counted as gone")
	}
	release()
	Settle()
	if _, err := os.Lstat(mine); !os.IsNotExist(err) {
		t.Errorf("our own placeholder stayed: %v", err)
	}
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("the placeholder of a kin whose pid was reused stayed after a release: %v", err)
	}
	if _, err := os.Lstat(shared); err != nil {
		t.Errorf("a release removed what a live kin records: %v", err)
	}
}

// A kin's marker is written after the kin started, and mtimes and start
// times are coarse (a start is rounded down to a 10 ms tick, an mtime may
// lag a write by a tick of the kernel's): a marker written right after its
// owner started counts as live, every time, and so does one whose time
// seems a tick before the owner's start; one written a second before it
// does not.
func TestAMarkerWrittenAfterItsOwnerStartedIsLive(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	for i := range 20 {
		pid := started(t, exec.Command("sleep", "30"))
		name := markAs(t, run, filepath.Join(ws, strconv.Itoa(i)), pid, time.Time{})
		if !ownerAlive(pid, name) {
			fi, _ := os.Lstat(name)
			at, _, _ := reaper.Started(pid)
			t.Fatalf("round %d: a marker written after its owner started counted dead (start %v, mtime %v)", i, at, fi.ModTime())
		}
	}
	pid := started(t, exec.Command("sleep", "30"))
	at, _, ok := reaper.Started(pid)
	if !ok {
		t.Fatal("cannot read a child's start")
	}
	name := markAs(t, run, filepath.Join(ws, "tick"), pid, at.Add(-10*time.Millisecond))
	if !ownerAlive(pid, name) {
		t.Errorf("a marker a tick before its owner's start counted dead")
	}
	if err := os.Chtimes(name, at.Add(-time.Second), at.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if ownerAlive(pid, name) {
		t.Errorf("a marker a second before the start of the process with its pid counted live")
	}
	os.Remove(name)
	if !ownerAlive(pid, name) {
		t.Errorf("a marker whose time cannot be read counted dead")
	}
	if ownerAlive(pid+1<<22, name) { // above pid_max: no such process
		t.Errorf("a marker of a pid no process has counted live")
	}
}

// A process named as this kin is (another kin) that seems to have started
// after its marker was written counts as live: the wall clock may have
// stepped forward since the marker was written (a virtual machine resumed
// and set to the host's time), and a live kin's placeholders must not go.
func TestAMarkerOfAKinNamedProcessStays(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	kin := exec.Command(os.Args[0], "-test.run=^TestOwnerHelper$")
	kin.Env = append(os.Environ(), ownerHelperEnv+"=1")
	stdin, err := kin.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	pid := started(t, kin)
	kept := filepath.Join(ws, ".mcp.json")
	markAs(t, run, ws, pid, time.Now().Add(-time.Hour), kept)
	Sweep(run)
	if _, err := os.Lstat(kept); err != nil {
		t.Errorf("the placeholder of a process named as kin was swept: %v", err)
	}
}

// A file system keeping whole seconds (ext4 with small inodes, FAT keeps
// two) stamps a marker written after its owner started with a time up to
// two seconds before that start: the owner is live. A marker stamped long
// before the start is a killed kin's still.
func TestAMarkerInWholeSecondsIsLiveWithinThem(t *testing.T) {
	run, ws := t.TempDir(), t.TempDir()
	pid := started(t, exec.Command("sleep", "30"))
	at, _, ok := reaper.Started(pid)
	if !ok {
		t.Fatal("cannot read a child's start")
	}
	whole := at.Add(-500 * time.Millisecond).Truncate(time.Second) // 0.5 to 1.5 s before
	name := markAs(t, run, ws, pid, whole)
	if !ownerAlive(pid, name) {
		t.Errorf("a marker stamped %v in whole seconds, its owner started at %v, counted dead", whole, at)
	}
	long := at.Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(name, long, long); err != nil {
		t.Fatal(err)
	}
	if ownerAlive(pid, name) {
		t.Errorf("a marker stamped an hour before its pid's process started counted live")
	}
}

// Times on a file system not known to be stamped by this machine's clock
// (a network one; here /proc) tell nothing, nor does a file that is gone.
func TestMarkerTimesOfAnUnknownFileSystemDoNotCount(t *testing.T) {
	if localTimes("/proc/self/stat") {
		t.Errorf("/proc taken for a file system of local times")
	}
	if localTimes(filepath.Join(t.TempDir(), "gone")) {
		t.Errorf("a file that is gone taken for one with local times")
	}
	// a "marker" on sysfs, stamped at boot, naming a process started
	// since: it may be a live kin's, stamped by another clock
	pid := started(t, exec.Command("sleep", "30"))
	if fi, err := os.Lstat("/sys/kernel"); err != nil || time.Since(fi.ModTime()) < time.Minute {
		t.Skip("no old enough /sys/kernel here")
	}
	if !ownerAlive(pid, "/sys/kernel") {
		t.Errorf("a marker on a file system not known to have local times counted dead")
	}
}
