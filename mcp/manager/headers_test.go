package manager_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A tool the SDK leaves out of tools/list because its x-mcp-header
// annotation is invalid is reported by the manager as a warning notice
// naming the server and the tool; the server's valid tools are offered.
func TestInvalidHeaderToolIsAServerWarning(t *testing.T) {
	tl := mcptest.Tool("regional", "d", false)
	tl["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Bad Header"},
	}}
	raw := &mcptest.Raw{Modern: true, Tools: func(string) ([]map[string]any, string) {
		return []map[string]any{mcptest.Tool("plain", "d", false), tl}, ""
	}}
	ts := mcptest.ServeHTTPHandler(t, raw)
	h := &host{}
	m, _ := setup(t, h, map[string]any{"hdr": map[string]any{"type": "http", "url": ts.URL}}, nil)
	m.Start(context.Background())
	if r := state(m, "hdr"); r.State != manager.StateConnected || r.Tools != 1 {
		t.Fatalf("hdr: %+v", r)
	}
	if toolNamed(m, "mcp__hdr__plain") == nil || toolNamed(m, "mcp__hdr__regional") != nil {
		t.Fatalf("tools offered: %v", toolNames(m))
	}
	got := h.noticesWith("tool regional was left out")
	if len(got) != 1 || !strings.HasPrefix(got[0], manager.LevelWarning+": ") || !strings.Contains(got[0], "MCP server hdr") ||
		!strings.Contains(got[0], "x-mcp-header") {
		t.Fatalf("notices %v", h.notices)
	}
}

// The manager offers tools sorted by name, whatever order each server
// lists them in and whichever server connected first.
func TestToolsAreOfferedSorted(t *testing.T) {
	list := func(names ...string) func(string) ([]map[string]any, string) {
		return func(string) ([]map[string]any, string) {
			var out []map[string]any
			for _, n := range names {
				out = append(out, mcptest.Tool(n, "d", true))
			}
			return out, ""
		}
	}
	zeta := mcptest.ServeHTTPHandler(t, &mcptest.Raw{Tools: list("zulu", "alpha", "mike")})
	alpha := mcptest.ServeHTTPHandler(t, &mcptest.Raw{Tools: list("yankee", "bravo")})
	h := &host{}
	m, _ := setup(t, h, map[string]any{
		"zeta":  map[string]any{"type": "http", "url": zeta.URL},
		"alpha": map[string]any{"type": "http", "url": alpha.URL},
	}, nil)
	m.Start(context.Background())
	want := []string{"mcp__alpha__bravo", "mcp__alpha__yankee", "mcp__zeta__alpha", "mcp__zeta__mike", "mcp__zeta__zulu"}
	for range 3 { // the same every time it is asked
		if got := toolNames(m); !slices.Equal(got, want) {
			t.Fatalf("tools %v, want %v", got, want)
		}
	}
}

func toolNames(m *manager.Manager) []string {
	var out []string
	for _, t := range m.Tools() {
		out = append(out, t.Spec().Name)
	}
	return out
}
