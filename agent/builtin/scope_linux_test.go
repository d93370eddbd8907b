//go:build linux

package builtin_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/sandbox/scopetest"
	"github.com/kin-dev/kin/agent/tool"
)

// TestAbstractSocketHelper is the command of the test below (the test
// binary, run by bash inside the sandbox): it connects to an abstract
// socket it listens on itself, then to the host's $KIN_ABSTRACT_HOST.
func TestAbstractSocketHelper(t *testing.T) {
	host := os.Getenv("KIN_ABSTRACT_HOST")
	if host == "" {
		t.Skip("the command of TestSandboxNetworkCannotReachHostAbstractSockets")
	}
	self := "@" + scopetest.Name("self")
	l, err := net.Listen("unix", self)
	if err != nil {
		fmt.Println("PROBE self listen:", err)
		return
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	if c, err := net.DialTimeout("unix", self, 5*time.Second); err != nil {
		fmt.Println("PROBE self dial:", err)
		return
	} else {
		c.Close()
	}
	if c, err := net.DialTimeout("unix", "@"+host, 5*time.Second); err != nil {
		fmt.Println("PROBE self=ok host=refused:", err)
	} else {
		c.Close()
		fmt.Println("PROBE self=ok host=connected")
	}
}

// A bash call with network: true shares the host's network namespace, and
// with it the abstract unix sockets (X11's @/tmp/.X11-unix/X0): the
// command must not reach the host's, while its own keep working.
func TestSandboxNetworkCannotReachHostAbstractSockets(t *testing.T) {
	opts := confined(t, sandbox.Config{})
	if abi := scopetest.ABI(); abi < 6 {
		t.Skipf("the kernel's Landlock ABI is %d: abstract unix sockets are scoped from ABI 6 on", abi)
	}
	if note := opts.Sandbox.Status().Note; note != "" {
		t.Fatalf("Landlock ABI %d, yet: %s", scopetest.ABI(), note)
	}
	_, env := workspace(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(outsideDir(t), "builtin.test") // /tmp is private in the sandbox
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	host, conns := scopetest.Listen(t)
	cmd := fmt.Sprintf("KIN_ABSTRACT_HOST=%s %s -test.run='^TestAbstractSocketHelper$' -test.v", host, bin)
	ap, r := runIn(t, opts, env, map[string]any{"command": cmd, "network": true})
	if !ap.Sandbox.Confined || !ap.Sandbox.Network {
		t.Fatalf("sandbox %+v", ap.Sandbox)
	}
	wantStatus(t, r, tool.StatusCompleted)
	if !strings.Contains(r.Output, "PROBE self=ok host=refused") {
		t.Fatalf("the confined command with network:\n%s", r.Output)
	}
	select {
	case <-conns:
		t.Fatal("the host's abstract socket accepted a connection from the confined command")
	default:
	}
	// the host's socket itself works: the refusal was the sandbox's
	c, err := net.Dial("unix", "@"+host)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
