//go:build !unix

package chat

import "os/exec"

func ownProcessGroup(cmd *exec.Cmd) {}
