//go:build !unix

package builtin

import (
	"os"
	"syscall"
)

// Without process groups only the command itself can be stopped.

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(p *os.Process, _ int) { _ = p.Kill() }

const (
	sigTerm = 15
	sigKill = 9
)

func groupAlive(*os.Process) bool { return false }
