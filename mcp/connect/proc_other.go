//go:build !unix

package connect

import (
	"os"
	"syscall"
)

// Without process groups (Windows) only the server process itself can be
// stopped: what it started may outlive it.

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, _ int) { _ = p.Kill() }

const (
	sigTerm = 15
	sigKill = 9
)

func groupAlive(int) bool { return false }
