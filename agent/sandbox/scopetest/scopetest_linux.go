//go:build linux

package scopetest

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"golang.org/x/sys/unix"
)

// ABI is the kernel's Landlock ABI version (0: none); the scope of
// abstract unix sockets came with 6.
func ABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// Name is a fresh abstract socket name (without its '@'): the abstract
// namespace is the network namespace's, shared with the host by a command
// with network.
func Name(what string) string {
	var b [8]byte
	rand.Read(b[:])
	return "kin-" + what + "-" + hex.EncodeToString(b[:])
}

// Listen listens on a fresh abstract socket of the host (see Lines); its
// name is without the '@'.
func Listen(t testing.TB) (name string, accepted <-chan string) {
	t.Helper()
	name = Name("host")
	_, accepted = Lines(t, "unix", "@"+name)
	return name, accepted
}
