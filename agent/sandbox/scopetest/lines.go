// Package scopetest gives the tests of the Landlock scope (agent/sandbox,
// the bash tool, confined MCP servers) the host's side: an abstract unix
// socket outside every sandbox, and the kernel's Landlock ABI (Linux), and
// a listener outside every sandbox that says what each connection wrote.
package scopetest

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// Lines listens on address of network, outside every sandbox (closed when
// the test ends), and returns its address; each connection it accepts
// sends the first line it wrote ("" when it wrote none before closing) on
// accepted.
func Lines(t testing.TB, network, address string) (addr string, accepted <-chan string) {
	t.Helper()
	l, err := net.Listen(network, address)
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
	return l.Addr().String(), ch
}
