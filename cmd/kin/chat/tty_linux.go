//go:build linux

package chat

import (
	"os"
	"syscall"
	"unsafe"
)

// IsTerminal reports whether f is a terminal (not /dev/null, which is a
// character device too).
func IsTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TCGETS), uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
