//go:build linux

// Package ptytest gives tests a real pseudo-terminal, with nothing but the
// syscall package: what kin chat and the commands kin starts meet when a
// person runs kin in a terminal. It is for tests only.
package ptytest

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// Open opens a pseudo-terminal pair (the test is skipped where there are
// none). Neither end becomes the caller's controlling terminal.
func Open(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		m.Close()
		t.Skipf("ptsname: %v", errno)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pts: %v", err)
	}
	return m, s
}
