//go:build !unix

package hooks

import (
	"os/exec"
	"syscall"
)

func groupAttr() *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
