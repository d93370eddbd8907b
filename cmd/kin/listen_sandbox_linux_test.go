package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const bwrap = "/usr/bin/bwrap"

// bwrapArgs are bubblewrap's arguments for a sandbox like the one kin
// confines a command with network in, or nil where bubblewrap cannot run
// (not installed, no user namespaces, Landlock or seccomp refusing).
func bwrapArgs(t *testing.T, ns []string) []string {
	t.Helper()
	args := append(append([]string{}, ns...), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--")
	if out, err := exec.Command(bwrap, append(args, "/bin/true")...).CombinedOutput(); err != nil {
		t.Logf("%v: bubblewrap cannot run here (%v %s)", ns, err, out)
		return nil
	}
	return args
}

// confinedSelf is the command line that runs this test binary in a
// bubblewrap sandbox with user and pid namespaces of its own and the host's
// network, as kin runs a command with network (the test is skipped where
// bubblewrap cannot run).
func confinedSelf(t *testing.T) []string {
	t.Helper()
	args := bwrapArgs(t, []string{"--unshare-all", "--share-net", "--unshare-user"})
	if args == nil {
		skipWithoutBwrap(t)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append(args, self)
}

func skipWithoutBwrap(t *testing.T) {
	t.Helper()
	if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
		t.Fatal("KIN_REQUIRE_BWRAP=1 but bubblewrap cannot run here")
	}
	t.Skip("bubblewrap cannot run here")
}

// A command kin confines with network (bubblewrap --share-net; confined
// stdio MCP servers have network by default) runs as the person's uid, so
// the uid check alone would let it connect to kin serve --listen and drive
// the kin that confined it: mcp/add a server whose command then runs
// unconfined. kin closes a connection whose socket is held by a process
// outside its own user and pid namespaces, unread, and says why; its own
// user in its own namespaces is still served. The peer is this test binary
// run inside bubblewrap as kin's sandbox runs commands: with a user
// namespace of its own, and without one (where the system allows none,
// bubblewrap still gives the command its own pid namespace).
func TestListenClosesASandboxedCommandsConnectionUnread(t *testing.T) {
	sandboxes := map[string][]string{
		"user and pid namespaces": {"--unshare-all", "--share-net", "--unshare-user"},
		"pid namespace only":      {"--unshare-all", "--share-net"},
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr, logs := listenKin(t, t.TempDir(), "127.0.0.1:0")
	if addr == "" {
		t.Fatal("kin serve --listen 127.0.0.1:0 did not start")
	}
	tried := 0
	for name, ns := range sandboxes {
		args := bwrapArgs(t, ns)
		if args == nil {
			continue
		}
		tried++
		cmd := exec.Command(bwrap, append(args, self)...)
		cmd.Env = []string{"KIN_TEST_PEER_DIAL=" + addr}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: the sandboxed peer: %v %s", name, err, out)
		}
		if !strings.HasPrefix(string(out), "closed: ") {
			t.Errorf("%s: a sandboxed command's connection: %s", name, out)
		}
		if w := waitLog(logs, "closed a connection unread"); !strings.Contains(w, "not kin's own") || !strings.Contains(w, "a sandboxed command") {
			t.Errorf("%s: kin's log: %q", name, w)
		}
	}
	if tried == 0 {
		skipWithoutBwrap(t)
	}
	// This user, in kin's namespaces, is served.
	if got := dialAndInitialize(addr); !strings.HasPrefix(got, "answered: ") || !strings.Contains(got, "name:kin") {
		t.Errorf("own user's connection: %s", got)
	}
}

// The other way round: a confined command listening on the port kin chat
// --connect names (kin serve not started yet, or stopped) could pose as kin
// and ask the person, through a form, for what kin keeps from the sandbox.
// kin chat refuses it before sending a byte, as it refuses another user's.
func TestConnectRefusesASandboxedCommandsServer(t *testing.T) {
	// --die-with-parent: the test kills the bwrap it started, and the
	// sandbox's own bwrap and listener, which it had forked, ran on (one
	// leaked per run of the test)
	squatter := exec.Command(bwrap, append([]string{"--die-with-parent"}, confinedSelf(t)...)...)
	squatter.Env = []string{"KIN_TEST_PEER_LISTEN=1"}
	chatRefuses(t, squatter, "a sandboxed command's", "not kin's own")
}
