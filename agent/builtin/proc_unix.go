//go:build unix

package builtin

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/kin-dev/kin/agent/reaper"
)

// groupAttr starts a command as the leader of a new session, and so of a
// new process group (everything it starts can be signalled at once) with no
// controlling terminal, as a confined command is: kin serve may run in the
// person's terminal's session (under kin chat, or an editor started from a
// shell), and there a command's /dev/tty was that terminal. A password
// prompt (ssh, sudo, a gpg pinentry) was written over the person's screen
// and its read, from a background process group, stopped the command
// (SIGTTIN) until the timeout; without a terminal it fails at once.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// owners holds each running command's reaper.Owner by the leader's pid: what
// the command starts that leaves its process group (setsid, a double fork)
// is found through it and stopped with the group.
var owners sync.Map // int -> *reaper.Owner

func ownerOf(p *os.Process) *reaper.Owner {
	if o, ok := owners.Load(p.Pid); ok {
		return o.(*reaper.Owner)
	}
	return nil
}

// startCmd starts cmd with start (cmd.Start, or the sandbox's Start for a
// confined command) with its processes tagged (a marker variable in their
// environment), so that those re-parented to kin are still known as its.
func startCmd(cmd *exec.Cmd, start func(*exec.Cmd) error) error {
	o := reaper.NewOwner(true)
	cmd.Env = o.Env(cmd.Env)
	if err := start(cmd); err != nil {
		return err
	}
	o.Started(cmd.Process)
	owners.Store(cmd.Process.Pid, o)
	return nil
}

// endGroup stops whatever of the command is left outside its process group
// (grace between SIGTERM and SIGKILL) and forgets it. The command has been
// waited for.
func endGroup(p *os.Process, grace time.Duration) {
	o := ownerOf(p)
	if o != nil {
		o.Stop(grace)
		owners.Delete(p.Pid)
	}
	// A SIGKILL just sent to the group takes effect a moment later, and a
	// sandbox's init outlives bubblewrap by the milliseconds it takes to
	// tear its namespaces down: the call ends when nothing of it runs any
	// more, looked at after 1, 2, 4 ms... (a first wait of 10 ms was most
	// of what kin added to a command's end).
	for wait, deadline := time.Millisecond, time.Now().Add(grace); reaper.GroupAlive(p.Pid) && time.Now().Before(deadline); wait = min(2*wait, 10*time.Millisecond) {
		time.Sleep(wait)
	}
	if o != nil {
		o.EndGroup(0) // what kin adopted from the group (bubblewrap's init) is reaped
	}
}

// signalGroup sends sig to the whole process group led by p (sig is
// syscall.SIGTERM or syscall.SIGKILL), or to p alone when there is no such
// group (a pid the group leader has not yet set up, say), and to what the
// command started outside the group.
func signalGroup(p *os.Process, sig syscall.Signal) {
	o := ownerOf(p)
	if o != nil {
		o.Snapshot() // before the group goes: then its children are re-parented
	}
	if syscall.Kill(-p.Pid, sig) != nil {
		_ = p.Signal(sig)
	}
	if o != nil {
		o.Signal(sig)
	}
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// groupAlive reports whether any process of p's group, or one the command
// started outside it, still runs.
func groupAlive(p *os.Process) bool {
	if o := ownerOf(p); o != nil && o.Alive() {
		return true
	}
	return reaper.GroupAlive(p.Pid)
}
