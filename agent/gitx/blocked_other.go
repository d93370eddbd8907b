//go:build !linux

package gitx

// blockedOn cannot look into a running git here: known is false, and the
// caller looks for the files git may wait on instead.
func blockedOn(pid int) (path string, known bool) { return "", false }

// canLookInto is false: nothing here says what a git waits on.
func canLookInto() bool { return false }
