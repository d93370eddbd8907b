//go:build !unix

package gitx

import "os/exec"

// inGroup leaves cmd as it is: the context's end kills git alone.
func inGroup(cmd *exec.Cmd) {}

// kill kills cmd's git.
func kill(cmd *exec.Cmd) error { return cmd.Process.Kill() }
