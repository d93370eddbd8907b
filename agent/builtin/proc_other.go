//go:build !unix

package builtin

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Without process groups only the command itself can be stopped.

func groupAttr() *syscall.SysProcAttr { return nil }

func startCmd(cmd *exec.Cmd, start func(*exec.Cmd) error) error { return start(cmd) }

func endGroup(*os.Process, time.Duration) {}

func signalGroup(p *os.Process, _ int) { _ = p.Kill() }

const (
	sigTerm = 15
	sigKill = 9
)

func groupAlive(*os.Process) bool { return false }
