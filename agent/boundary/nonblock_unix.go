//go:build unix

package boundary

import "syscall"

// openNonBlock opens without waiting: a FIFO opened for reading otherwise
// blocks in open(2) until some process opens it for writing, which no
// context can cancel. Regular files and folders read as usual with it.
const openNonBlock = syscall.O_NONBLOCK
