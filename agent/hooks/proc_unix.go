//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// groupAttr puts an unconfined hook in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup stops the hook's process group (a confined hook leads its
// own session, whose namespace takes the rest down).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
