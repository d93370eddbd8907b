package connect_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// listChanges returns options whose tool list handler counts into ch.
func listChanges(ch chan struct{}, bound time.Duration) connect.Options {
	var o connect.Options
	o.ListenTimeout = bound
	o.Client.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return o
}

// On the 2026-07-28 protocol the SDK subscribes to tool list changes at
// connect; the server acknowledges and its changes arrive on the stream.
func TestListenModern(t *testing.T) {
	d := mcptest.NewDocs()
	seen := &mcptest.Methods{}
	url := mcptest.ServeHTTPStateless(t, d.Server, seen)
	changed := make(chan struct{}, 1)
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("docs", url, nil), listChanges(changed, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ProtocolVersion != "2026-07-28" {
		t.Fatalf("protocol %q", c.ProtocolVersion)
	}
	r := c.Listen(context.Background())
	if !r.Requested.ToolsListChanged || !r.Acknowledged() || r.Problem != "" {
		t.Fatalf("listen %+v", r)
	}
	if seen.Count("subscriptions/listen@2026-07-28") != 1 {
		t.Fatalf("requests %v", seen.List())
	}
	mcptest.AddTool(d.Server, "late", "Late.", false, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return mcptest.Text("ok"), nil
	})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed on the subscription")
	}
	if got := text(t, c.Session, "query-docs"); got != "docs for hi" {
		t.Fatalf("got %q", got)
	}
}

// An older session subscribes to nothing: there is nothing to check.
func TestListenLegacy(t *testing.T) {
	d := mcptest.NewDocs()
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("docs", mcptest.ServeHTTP(t, d.Server), nil), listChanges(make(chan struct{}, 1), 0))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ProtocolVersion != connect.LegacyProtocolVersion {
		t.Fatalf("protocol %q", c.ProtocolVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if r := c.Listen(ctx); r.Requested.ToolsListChanged || !r.Acknowledged() {
		t.Fatalf("listen %+v", r)
	}
}

// A server that advertises tool list changes and then refuses, ignores or
// half-honours the subscription is reported, each within the bound, and
// the session still works. One that never answers the listen request does
// not hold the connect up past the bound.
func TestListenNotAcknowledged(t *testing.T) {
	const bound = 300 * time.Millisecond
	for _, tc := range []struct {
		name    string
		mode    mcptest.ListenMode
		problem string
		fast    bool // reported on the reply, without waiting for the bound
	}{
		{"refused", mcptest.ListenRefuse, "does not support subscriptions/listen (method not found)", true},
		{"silent", mcptest.ListenSilent, "no acknowledgement within 300ms", false},
		{"hang", mcptest.ListenHang, "within 300ms", false}, // no reply, or no acknowledgement: the same bound
		{"ack nothing", mcptest.ListenAckNothing, "left out part of the requested filter", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := &mcptest.Raw{Modern: true, Listen: tc.mode}
			url := mcptest.ServeHTTPHandler(t, raw).URL
			start := time.Now()
			c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("raw", url, nil), listChanges(make(chan struct{}, 1), bound))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.ProtocolVersion != "2026-07-28" || raw.Listens.Load() != 1 {
				t.Fatalf("protocol %q, %d listens", c.ProtocolVersion, raw.Listens.Load())
			}
			r := c.Listen(context.Background())
			took := time.Since(start)
			if r.Acknowledged() || !r.Missing.ToolsListChanged || !strings.Contains(r.Problem, tc.problem) {
				t.Fatalf("listen %+v", r)
			}
			if took > 3*time.Second || (tc.fast && took >= bound) {
				t.Errorf("reported after %s", took)
			}
			if got := text(t, c.Session, "echo"); got != "ok" {
				t.Fatalf("call after the failed subscription: %q", got)
			}
		})
	}
}

// Over stdio the SDK's server acknowledges the subscription on the session.
func TestListenStdio(t *testing.T) {
	o := listChanges(make(chan struct{}, 1), 0)
	o.Env = kinEnv
	c, err := connect.Dial(context.Background(), mcptest.Stdio(t, "echo", nil), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := c.Listen(context.Background())
	if c.ProtocolVersion != "2026-07-28" || !r.Requested.ToolsListChanged || !r.Acknowledged() {
		t.Fatalf("protocol %q, listen %+v", c.ProtocolVersion, r)
	}
}

// The subscription's stream lives as long as the subscription: unlike a
// reply, it is limited event by event, not to MaxMessage in all.
func TestListenStreamNotCapped(t *testing.T) {
	raw := &mcptest.Raw{Modern: true, Listen: mcptest.ListenFlood}
	var n atomic.Int64
	var o connect.Options
	o.Client.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { n.Add(1) }
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("raw", mcptest.ServeHTTPHandler(t, raw).URL, nil), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := c.Listen(context.Background()); !r.Acknowledged() {
		t.Fatalf("listen %+v", r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < mcptest.FloodEvents && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := n.Load(); got != mcptest.FloodEvents {
		t.Fatalf("%d of %d list changes arrived", got, mcptest.FloodEvents)
	}
}
