package calltool_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// BenchmarkCallOverhead is what kin's call path (Prepare and Run: approval
// building, limits, result mapping, redaction) adds to one MCP tool call
// made with the go-sdk session alone, against an in-process http server.
// Two benchmarks run one after the other differ by more than that overhead
// from run to run (the server, the loopback, the scheduler), so each
// operation makes one direct call and one call through kin, back to back,
// and the overhead is the median of the paired differences. Medians per
// call are reported alongside.
func BenchmarkCallOverhead(b *testing.B) {
	d := mcptest.NewDocs()
	bd := dial(b, mcptest.HTTPConfig("docs", mcptest.ServeHTTP(b, d.Server), nil))
	tl := tools(b, bd, false)["query-docs"]
	args := json.RawMessage(`{"query":"react hooks"}`)
	ctx := context.Background()
	direct := func() {
		if _, err := bd.conn.Session.CallTool(ctx, &mcp.CallToolParams{Name: "query-docs", Arguments: map[string]any{"query": "react hooks"}}); err != nil {
			b.Fatal(err)
		}
	}
	viaKin := func() {
		a, err := tl.Prepare(ctx, tool.Env{}, args)
		if err != nil {
			b.Fatal(err)
		}
		if r := a.Run(ctx, nil); r.Status != tool.StatusCompleted {
			b.Fatal(r.Output)
		}
	}
	direct() // warm both paths (connection, caches)
	viaKin()
	var directs, kins, overheads []time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so neither always pays for the
		// other's garbage or a cold connection.
		first, second := direct, viaKin
		if i%2 == 1 {
			first, second = viaKin, direct
		}
		t0 := time.Now()
		first()
		t1 := time.Now()
		second()
		t2 := time.Now()
		dt, kt := t1.Sub(t0), t2.Sub(t1)
		if i%2 == 1 {
			dt, kt = kt, dt
		}
		directs, kins, overheads = append(directs, dt), append(kins, kt), append(overheads, kt-dt)
	}
	b.ReportMetric(micros(median(directs)), "us/call-direct")
	b.ReportMetric(micros(median(kins)), "us/call-kin")
	b.ReportMetric(micros(median(overheads)), "us/kin-overhead")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	return s[len(s)/2]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
