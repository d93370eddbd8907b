//go:build !unix

package mcptest

import "syscall"

// setsidAttr: there are no sessions to leave here.
func setsidAttr(bool) *syscall.SysProcAttr { return nil }
