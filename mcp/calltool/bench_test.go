package calltool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// BenchmarkCallAdapter is one call through Prepare and Run (approval
// building, framing, result mapping) to an in-process http server.
func BenchmarkCallAdapter(b *testing.B) {
	d := mcptest.NewDocs()
	bd := dial(b, mcptest.HTTPConfig("docs", mcptest.ServeHTTP(b, d.Server), nil))
	tl := tools(b, bd, false)["query-docs"]
	args := json.RawMessage(`{"query":"react hooks"}`)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		a, err := tl.Prepare(ctx, tool.Env{}, args)
		if err != nil {
			b.Fatal(err)
		}
		if r := a.Run(ctx, nil); r.Status != tool.StatusCompleted {
			b.Fatal(r.Output)
		}
	}
}

// BenchmarkCallDirect is the same call made with the go-sdk session alone.
func BenchmarkCallDirect(b *testing.B) {
	d := mcptest.NewDocs()
	bd := dial(b, mcptest.HTTPConfig("docs", mcptest.ServeHTTP(b, d.Server), nil))
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := bd.conn.Session.CallTool(ctx, &mcp.CallToolParams{Name: "query-docs", Arguments: map[string]any{"query": "react hooks"}}); err != nil {
			b.Fatal(err)
		}
	}
}
