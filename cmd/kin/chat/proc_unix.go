//go:build unix

package chat

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup keeps the terminal's Ctrl-C away from the service.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
