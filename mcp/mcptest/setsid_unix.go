//go:build unix

package mcptest

import "syscall"

// setsidAttr starts a child in a session (and process group) of its own
// when on is set.
func setsidAttr(on bool) *syscall.SysProcAttr {
	if !on {
		return nil
	}
	return &syscall.SysProcAttr{Setsid: true}
}
