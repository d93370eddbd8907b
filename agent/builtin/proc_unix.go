//go:build unix

package builtin

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// groupAttr starts a command as the leader of a new process group, so that
// everything it starts can be signalled at once.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to the whole process group led by p (sig is
// syscall.SIGTERM or syscall.SIGKILL), or to p alone when there is no such
// group (a pid the group leader has not yet set up, say).
func signalGroup(p *os.Process, sig syscall.Signal) {
	if syscall.Kill(-p.Pid, sig) != nil {
		_ = p.Signal(sig)
	}
}

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// groupAlive reports whether any process of p's group still runs. Zombies
// (dead, waiting for init to reap them) do not count: on Linux /proc tells
// them apart; elsewhere any member counts.
func groupAlive(p *os.Process) bool {
	if syscall.Kill(-p.Pid, 0) != nil {
		return false
	}
	if runtime.GOOS != "linux" {
		return true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := []byte(strconv.Itoa(p.Pid))
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) >= 3 && bytes.Equal(f[2], want) && f[0][0] != 'Z' {
			return true
		}
	}
	return false
}
