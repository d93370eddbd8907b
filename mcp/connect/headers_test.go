package connect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// Tools with invalid x-mcp-header annotations, which go-sdk drops from
// tools/list silently, are reported, once each, with the SDK's reason; the
// valid ones are listed as ever.
func TestInvalidHeaderToolsReported(t *testing.T) {
	withHeader := func(name, typ, header string) map[string]any {
		tl := mcptest.Tool(name, "d", false)
		tl["inputSchema"] = map[string]any{"type": "object", "properties": map[string]any{
			"region": map[string]any{"type": typ, "x-mcp-header": header},
		}}
		return tl
	}
	raw := &mcptest.Raw{Modern: true, Tools: func(string) ([]map[string]any, string) {
		return []map[string]any{
			mcptest.Tool("plain", "d", false),
			withHeader("good", "string", "Region"),
			withHeader("object", "object", "Region"),
			withHeader("spaces", "string", "Bad Header"),
		}, ""
	}}
	ts := mcptest.ServeHTTPHandler(t, raw)
	var mu sync.Mutex
	got := map[string]string{}
	c, err := connect.Dial(context.Background(), mcptest.HTTPConfig("raw", ts.URL, nil), connect.Options{
		ToolDropped: func(tool, why string) {
			mu.Lock()
			defer mu.Unlock()
			if _, dup := got[tool]; dup {
				t.Errorf("%s reported twice", tool)
			}
			got[tool] = why
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 { // a second listing reports nothing new
		raws, err := catalog.List(context.Background(), c.Session, catalog.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if len(raws) != 2 {
			t.Fatalf("listed %d tools, want plain and good", len(raws))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got["object"] == "" || got["spaces"] == "" {
		t.Fatalf("reported %v", got)
	}
}
