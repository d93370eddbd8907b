package calltool_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

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
