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
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("docs", url, nil), listChanges(changed, time.Hour)) // an acknowledgement slow under load is still one
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
	case <-time.After(time.Minute): // a guard against a hang
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
	if r := c.Listen(context.Background()); r.Requested.ToolsListChanged || !r.Acknowledged() {
		t.Fatalf("listen %+v", r)
	}
}

// A server that advertises tool list changes and then refuses, ignores or
// half-honours the subscription is reported, and the session still works.
// A refusal or a partial acknowledgement is reported on the reply (the
// bound is an hour there: waiting for it would never end); silence and no
// reply at all are reported when the bound has passed.
func TestListenNotAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mode    mcptest.ListenMode
		bound   time.Duration
		problem string
	}{
		{"refused", mcptest.ListenRefuse, time.Hour, "does not support subscriptions/listen (method not found)"},
		{"silent", mcptest.ListenSilent, 300 * time.Millisecond, "no acknowledgement within 300ms"},
		{"hang", mcptest.ListenHang, 300 * time.Millisecond, "within 300ms"}, // no reply, or no acknowledgement: the same bound
		{"ack nothing", mcptest.ListenAckNothing, time.Hour, "left out part of the requested filter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := &mcptest.Raw{Modern: true, Listen: tc.mode}
			url := mcptest.ServeHTTPHandler(t, raw).URL
			c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("raw", url, nil), listChanges(make(chan struct{}, 1), tc.bound))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.ProtocolVersion != "2026-07-28" || raw.Listens.Load() != 1 {
				t.Fatalf("protocol %q, %d listens", c.ProtocolVersion, raw.Listens.Load())
			}
			r := c.Listen(context.Background())
			if r.Acknowledged() || !r.Missing.ToolsListChanged || !strings.Contains(r.Problem, tc.problem) {
				t.Fatalf("listen %+v", r)
			}
			if got := text(t, c.Session, "echo"); got != "ok" {
				t.Fatalf("call after the failed subscription: %q", got)
			}
		})
	}
}

// Over stdio the SDK's server acknowledges the subscription on the session.
func TestListenStdio(t *testing.T) {
	o := listChanges(make(chan struct{}, 1), time.Hour) // an acknowledgement slow under load is still one
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
	all := make(chan struct{})
	var o connect.Options
	o.Client.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		if n.Add(1) == mcptest.FloodEvents {
			close(all)
		}
	}
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("raw", mcptest.ServeHTTPHandler(t, raw).URL, nil), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := c.Listen(context.Background()); !r.Acknowledged() {
		t.Fatalf("listen %+v", r)
	}
	select {
	case <-all:
	case <-time.After(time.Minute): // a guard against a hang, not a timing goal
		t.Fatalf("%d of %d list changes arrived", n.Load(), mcptest.FloodEvents)
	}
}
