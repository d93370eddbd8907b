package manager_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// listenBound is the acknowledgement bound of these tests.
const listenBound = 300 * time.Millisecond

// setupListen is setup with a short acknowledgement bound.
func setupListen(t *testing.T, h *host, servers map[string]any) *manager.Manager {
	t.Helper()
	return setupListenBound(t, h, servers, listenBound)
}

func setupListenBound(t *testing.T, h *host, servers map[string]any, bound time.Duration) *manager.Manager {
	t.Helper()
	m, _ := setupWith(t, servers, manager.Options{Host: h, ListenTimeout: bound})
	return m
}

// On the 2026-07-28 protocol tool list changes arrive on the subscription
// the SDK opens; kin refetches and re-vets exactly as for the legacy
// notification: a late tool is unapproved, a redefined one loses its grant.
func TestModernListChanges(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	mcptest.AddTool(srv, "lookup", "Look things up.", true, okHandler)
	mcptest.AddTool(srv, "query", "Query.", false, okHandler)
	seen := &mcptest.Methods{}
	h := &host{}
	// An hour: an acknowledgement slow under load is still one (no warning
	// can come while the test runs, so none needs waiting for).
	m := setupListenBound(t, h, map[string]any{"docs": map[string]any{"type": "http", "url": mcptest.ServeHTTPStateless(t, srv, seen)}}, time.Hour)
	m.Start(context.Background())
	if !approval(t, m, "mcp__docs__lookup").AutoAllow || approval(t, m, "mcp__docs__query").AutoAllow {
		t.Fatal("initial read-only tool should be auto-allowed, the other not")
	}
	if seen.Count("server/discover@2026-07-28") == 0 || seen.Count("subscriptions/listen@2026-07-28") != 1 {
		t.Fatalf("not subscribed on the 2026-07-28 protocol: %v", seen.List())
	}
	for _, e := range seen.List() {
		if !strings.HasSuffix(e, "@2026-07-28") {
			t.Fatalf("a request off the 2026-07-28 protocol: %v", seen.List())
		}
	}

	checkLateAndRedefinedTools(t, srv, m, h)

	// The list changes came on the subscription, so it was acknowledged:
	// no warning.
	if n := h.noticesWith("did not acknowledge"); len(n) != 0 {
		t.Fatalf("warned: %v", n)
	}
	if c := m.Check(context.Background(), "docs"); !c[0].Ready || strings.Contains(c[0].Explanation, "refresh") {
		t.Fatalf("check %+v", c)
	}
}

// A server that advertises tool list changes but refuses, ignores or
// half-honours the subscription gets one warning per connection, and
// mcp/check explains it; its tools still work. A server on the older
// protocol cannot be checked and is not warned about.
func TestListenWarning(t *testing.T) {
	serve := func(modern bool, mode mcptest.ListenMode) string {
		return mcptest.ServeHTTPHandler(t, &mcptest.Raw{Modern: modern, Listen: mode}).URL
	}
	h := &host{}
	m := setupListen(t, h, map[string]any{
		"refuses": map[string]any{"type": "http", "url": serve(true, mcptest.ListenRefuse)},
		"silent":  map[string]any{"type": "http", "url": serve(true, mcptest.ListenSilent)},
		"hangs":   map[string]any{"type": "http", "url": serve(true, mcptest.ListenHang)},
		"halfway": map[string]any{"type": "http", "url": serve(true, mcptest.ListenAckNothing)},
		"legacy":  map[string]any{"type": "http", "url": serve(false, 0)},
	})
	m.Start(context.Background())
	warned := []string{"refuses", "silent", "hangs", "halfway"}
	// One check per connection, so once each has warned no more can come.
	eventually(t, "warnings", func() bool { return len(h.noticesWith("did not acknowledge")) >= len(warned) })
	for _, name := range warned {
		want := "warning: MCP server " + name + " advertises tool list changes but did not acknowledge the subscription; its tools will not refresh automatically (calls still work)"
		if n := h.noticesWith("MCP server " + name + " advertises"); len(n) != 1 || n[0] != want {
			t.Errorf("%s: notices %q", name, n)
		}
		c := m.Check(context.Background(), name)[0]
		if !c.Ready || !strings.Contains(c.Explanation, "its tools will not refresh automatically (calls still work): it advertises tool list changes but did not acknowledge the subscription") {
			t.Errorf("%s: check %+v", name, c)
		}
		if r := run(t, toolNamed(m, "mcp__"+name+"__echo"), `{}`); r.Status != tool.StatusCompleted {
			t.Errorf("%s: call %+v", name, r)
		}
	}
	if c := m.Check(context.Background(), "refuses")[0]; !strings.Contains(c.Explanation, "method not found") {
		t.Errorf("refuses: check %+v", c)
	}
	if n := h.noticesWith("MCP server legacy advertises"); len(n) != 0 {
		t.Errorf("legacy server warned: %v", n)
	}
	if c := m.Check(context.Background(), "legacy")[0]; !c.Ready || strings.Contains(c.Explanation, "refresh") {
		t.Errorf("legacy: check %+v", c)
	}

	// A new connection is checked (and warned about) again.
	m.Close()
	h2 := &host{}
	m2 := setupListen(t, h2, map[string]any{"refuses": map[string]any{"type": "http", "url": serve(true, mcptest.ListenRefuse)}})
	m2.Start(context.Background())
	eventually(t, "warning", func() bool { return len(h2.noticesWith("did not acknowledge")) == 1 })
}
