//go:build linux

// Package scopetest gives the tests of the Landlock scope (agent/sandbox,
// the bash tool, confined MCP servers) the host's side: an abstract unix
// socket outside every sandbox, and the kernel's Landlock ABI.
package scopetest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"net"
	"strings"
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

// Listen listens on a fresh abstract socket of the host, closed when the
// test ends; each connection it accepts sends the first line it wrote (""
// when it wrote none before closing) on accepted.
func Listen(t testing.TB) (name string, accepted <-chan string) {
	t.Helper()
	name = Name("host")
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	ch := make(chan string, 8)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			ch <- strings.TrimSpace(line)
		}
	}()
	return name, ch
}
