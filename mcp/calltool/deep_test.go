package calltool_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// Attack: structuredContent of fifty arrays nested 985 deep (100 kB in
// all). Indenting it wrote two spaces per level on every line: 1 GB of
// kin's memory and seconds of work for one call (a 1 MiB reply: ten
// times that), all but 64 kB then cut. It goes compact;
// shallow content is still indented.
func TestDeepStructuredContentIsNotIndented(t *testing.T) {
	const d = 985
	deep := strings.Repeat("[", d) + strings.Repeat("]", d)
	raw := &mcptest.Raw{Call: func(name string, _ json.RawMessage) (any, *mcptest.RPCError) {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": "x"}},
			"structuredContent": map[string]any{"a": json.RawMessage("[" + strings.Repeat(deep+",", 49) + deep + "]"), "s": "[[{ \"]"}}, nil
	}}
	b := dial(t, mcptest.HTTPConfig("raw", mcptest.ServeHTTPHandler(t, raw).URL, nil))
	// The SDK's decoding of the reply takes seconds of CPU under the race
	// detector, past DefaultTimeout on a loaded machine (CI runs every
	// package at once): this test is about memory, not speed.
	b.timeout = 10 * time.Minute
	tl := tools(t, b, false)["echo"]
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	r := prepare(t, tl, `{}`).Run(context.Background(), nil)
	runtime.ReadMemStats(&ms)
	if n := ms.TotalAlloc - before; n > 64<<20 {
		t.Fatalf("one call's result took %d MB of memory", n>>20)
	}
	if r.Saw == nil || r.Saw.Structured != "appended" || !strings.Contains(r.Output, `{"a":[[[[`) || len(r.Output) > tool.MaxOutput {
		t.Fatalf("%s %.300q", r.Status, r.Output)
	}
}

// Attack: a model steered by a result calls a tool with arguments nested
// 5,000 deep (10 kB). Indenting them for the approval took 335 MB, to show
// its first 2 kB.
func TestDeepArgumentsAreNotIndented(t *testing.T) {
	d := mcptest.NewDocs()
	b := dial(t, mcptest.HTTPConfig("docs", mcptest.ServeHTTP(t, d.Server), nil))
	tl := tools(t, b, false)["query-docs"]
	args := `{"query":` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	a := prepare(t, tl, args)
	runtime.ReadMemStats(&ms)
	if n := ms.TotalAlloc - before; n > 8<<20 {
		t.Fatalf("the approval took %d MB of memory", n>>20)
	}
	if !strings.HasPrefix(a.Approval.Arguments, `{"query":[[[`) {
		t.Fatalf("arguments shown %.100q", a.Approval.Arguments)
	}
	if a := prepare(t, tl, `{"query":"x"}`); a.Approval.Arguments != "{\n  \"query\": \"x\"\n}" {
		t.Fatalf("shallow arguments not indented: %q", a.Approval.Arguments)
	}
}
