//go:build unix

package connect

import (
	"errors"
	"os"
	"syscall"
)

// groupAttr starts a stdio server as the leader of a new process group, so
// that everything it starts can be signalled at once.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

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

// groupAlive reports whether any process of the group is still running.
// Zombies (children reparented to an init that has not reaped them yet) do
// not count: they hold no resources but a table slot.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	alive, ok := procGroupAlive(pgid)
	if !ok {
		return true // no /proc: trust kill(2)
	}
	return alive
}

// procGroupAlive scans /proc for a live (non-zombie) member of the group.
func procGroupAlive(pgid int) (alive, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		state, group, ok := ProcState(e.Name())
		if ok && group == pgid && state != 'Z' && state != 'X' {
			return true, true
		}
	}
	return false, true
}
