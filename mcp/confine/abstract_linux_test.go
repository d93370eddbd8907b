//go:build linux

package confine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/sandbox/scopetest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A confined stdio server has the network by default, and so shares the
// host's abstract unix sockets (X11's @/tmp/.X11-unix/X0, D-Bus): it must
// not reach the host's, while its own keep working (the server starts only
// when its own socket works).
func TestServerCannotReachHostAbstractSockets(t *testing.T) {
	w := newWorld(t)
	if v := scopetest.ABI(); v < 6 {
		t.Skipf("the kernel's Landlock ABI is %d: abstract unix sockets are scoped from ABI 6 on", v)
	}
	if note := w.sb.Status().Note; note != "" {
		t.Fatalf("the kernel has Landlock ABI 6, yet: %s", note)
	}
	host, lines := scopetest.Listen(t)
	srv := mcptest.Stdio(t, "abstract-or-die", map[string]string{"KIN_MCPTEST_PROBE": host})
	srv.Name = "abstractprobe"
	_, plan, err := w.dial(t, srv)
	if err != nil {
		t.Fatalf("the server did not start (its own abstract socket?): %v", err)
	}
	if !strings.Contains(plan.Describe, "reaches the network") {
		t.Fatalf("not a server with network: %s", plan.Describe)
	}
	// the server tried before it answered initialize: by now it has
	select {
	case got := <-lines:
		t.Fatalf("a confined server reached the host's abstract socket (%q)", got)
	case <-time.After(500 * time.Millisecond):
	}
}
