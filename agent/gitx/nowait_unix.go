//go:build unix

package gitx

import "syscall"

// openNoWait opens a FIFO without waiting for a writer (a regular file
// reads as usual) and refuses a symlink in the last element.
const openNoWait = syscall.O_NONBLOCK | syscall.O_NOFOLLOW
