//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// groupAttr puts an unconfined hook in a session of its own, and so a
// process group of its own with no controlling terminal, as a command is
// (package builtin): under kin chat a hook's password prompt would be
// drawn over the person's screen and its read would stop the hook until
// its timeout; without a terminal it fails at once.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// killGroup stops the hook's process group (a confined hook leads its
// own session, whose namespace takes the rest down).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
