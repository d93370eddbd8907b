package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

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
	const bwrap = "/usr/bin/bwrap"
	sandboxes := map[string][]string{
		"user and pid namespaces": {"--unshare-all", "--share-net", "--unshare-user"},
		"pid namespace only":      {"--unshare-all", "--share-net"},
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr, logs := listenKin(t, "127.0.0.1:0")
	if addr == "" {
		t.Fatal("kin serve --listen 127.0.0.1:0 did not start")
	}
	tried := 0
	for name, ns := range sandboxes {
		args := append(append([]string{}, ns...), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--")
		if out, err := exec.Command(bwrap, append(args, "/bin/true")...).CombinedOutput(); err != nil {
			t.Logf("%s: bubblewrap cannot run here (%v %s); skipped", name, err, out)
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
		if os.Getenv("KIN_REQUIRE_BWRAP") == "1" {
			t.Fatal("KIN_REQUIRE_BWRAP=1 but bubblewrap cannot run here")
		}
		t.Skip("bubblewrap cannot run here")
	}
	// This user, in kin's namespaces, is served.
	if got := dialAndInitialize(addr); !strings.HasPrefix(got, "answered: ") || !strings.Contains(got, "name:kin") {
		t.Errorf("own user's connection: %s", got)
	}
}
