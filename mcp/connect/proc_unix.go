//go:build unix

package connect

import (
	"os"
	"syscall"

	"github.com/kin-dev/kin/agent/reaper"
)

// groupAttr starts a stdio server as the leader of a new session, and so of
// a new process group (everything it starts can be signalled at once) with
// no controlling terminal, as a command is (package builtin): under kin
// chat a server's prompt on /dev/tty would be drawn over the person's
// screen and its read would stop the server; without a terminal it fails
// at once.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// signalGroup sends sig to the whole process group led by p, or to p alone
// when there is no such group.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if syscall.Kill(-p.Pid, sig) != nil {
		_ = p.Signal(sig)
	}
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// groupAlive reports whether any process of the group is still running
// (zombies do not count).
func groupAlive(pgid int) bool { return reaper.GroupAlive(pgid) }
