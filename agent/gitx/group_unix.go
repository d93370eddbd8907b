//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// inGroup starts cmd's git in a process group of its own, and makes
// killing it (the context's end, or the FIFO watch: kill) kill every git
// it started too: one of those waiting on a FIFO would otherwise live on,
// holding git's output pipes open, and Wait would wait for it for good.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return kill(cmd) }
}

// kill kills cmd's git and every process in its group.
func kill(cmd *exec.Cmd) error {
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}
