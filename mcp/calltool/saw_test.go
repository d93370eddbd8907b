package calltool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// sawServer returns results mixing content and structuredContent the ways
// servers do: both agreeing (the specification's backwards-compatible
// text block), both disagreeing, structured only, binary, a server secret,
// and a result far over the limit.
func sawServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "saw", Version: "1"}, nil)
	add := func(name string, res *mcp.CallToolResult) {
		mcptest.AddTool(s, name, name, true, func(context.Context, map[string]any) (*mcp.CallToolResult, error) { return res, nil })
	}
	add("same", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"b": 2, "a": 1}`}},
		StructuredContent: map[string]any{"a": 1, "b": 2}})
	add("differ", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a summary for people"}},
		StructuredContent: map[string]any{"rows": []any{"r1", "r2"}}})
	add("only", &mcp.CallToolResult{StructuredContent: map[string]any{"answer": 42}})
	add("binary", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "see picture"},
		&mcp.ImageContent{Data: []byte{1, 2, 3, 4}, MIMEType: "image/png"}}})
	add("secret", mcptest.Text("the token is tok-secret-99"))
	add("linked", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "see"},
		&mcp.ResourceLink{URI: "notes://a?key=tok-secret-99", Name: "a\u202e", Title: "A", MIMEType: "text/plain"}}})
	add("huge", mcptest.Text(strings.Repeat("x", tool.MaxOutput+5000)))
	return s
}

func TestWhatTheModelSaw(t *testing.T) {
	b := dial(t, mcptest.HTTPConfig("saw", mcptest.ServeHTTP(t, sawServer()), map[string]string{"Authorization": "Bearer tok-secret-99"}))
	ts := tools(t, b, false)
	run := func(name string) tool.Result {
		t.Helper()
		r := prepare(t, ts[name], `{}`).Run(context.Background(), nil)
		if r.Saw == nil || r.Saw.Framing != "untrusted-mcp-result" || r.Saw.Server != "saw" || r.Saw.Tool != name {
			t.Fatalf("%s: saw %+v", name, r.Saw)
		}
		return r
	}
	structured := func(r tool.Result) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(r.Saw.StructuredContent, &m); err != nil {
			t.Fatalf("structured content %s: %v", r.Saw.StructuredContent, err)
		}
		return m
	}

	// The same JSON in a text block: sent once, and the person is told why.
	r := run("same")
	if r.Saw.Structured != "sameAsText" || strings.Count(r.Output, `"a"`) != 1 || structured(r)["a"] != float64(1) {
		t.Fatalf("same: %q %+v", r.Output, r.Saw)
	}
	// Different: both go to the model, the structured content labelled.
	r = run("differ")
	if r.Saw.Structured != "appended" || !strings.Contains(r.Output, "a summary for people") ||
		!strings.Contains(r.Output, "[structuredContent]") || !strings.Contains(r.Output, `"r2"`) {
		t.Fatalf("differ: %q %+v", r.Output, r.Saw)
	}
	r = run("only")
	if r.Saw.Structured != "only" || !strings.Contains(r.Output, `"answer": 42`) {
		t.Fatalf("only: %q %+v", r.Output, r.Saw)
	}
	// Binary: summarised, and the cut says so with its length.
	r = run("binary")
	if len(r.Saw.Cuts) != 1 || r.Saw.Cuts[0].What != "image" || r.Saw.Cuts[0].Bytes != 4 || !strings.Contains(r.Output, "[image omitted: image/png, 4 bytes]") {
		t.Fatalf("binary: %q %+v", r.Output, r.Saw)
	}
	// A configured secret: removed, and the cut says a secret was, never which.
	r = run("secret")
	if strings.Contains(r.Output, "tok-secret-99") || len(r.Saw.Cuts) != 1 || r.Saw.Cuts[0].What != "secrets" {
		t.Fatalf("secret: %q %+v", r.Output, r.Saw)
	}
	if b, _ := json.Marshal(r.Saw); strings.Contains(string(b), "tok-secret-99") {
		t.Fatalf("the secret is in what the person is shown: %s", b)
	}
	// A resource link: the person gets it to open, the model is told how
	// to read it; neither gets the secret or invisible characters.
	r = run("linked")
	if len(r.Links) != 1 || r.Links[0].Server != "saw" || r.Links[0].Name != "a" || r.Links[0].Title != "A" ||
		strings.Contains(r.Links[0].URI, "tok-secret-99") || !strings.HasPrefix(r.Links[0].URI, "notes://a?key=") {
		t.Fatalf("links %+v", r.Links)
	}
	if !strings.Contains(r.Output, `can be read with read_mcp_resource, server "saw"`) || strings.Contains(r.Output, "tok-secret-99") {
		t.Fatalf("linked output %q", r.Output)
	}
	// Over the limit: cut, with how much the model got.
	r = run("huge")
	if r.Status != tool.StatusOutputLimit || len(r.Output) > tool.MaxOutput || len(r.Saw.Cuts) != 1 {
		t.Fatalf("huge: status %s, %d bytes, %+v", r.Status, len(r.Output), r.Saw.Cuts)
	}
	c := r.Saw.Cuts[0]
	if c.What != "output" || c.Bytes != tool.MaxOutput+5000 || c.Kept <= 0 || c.Kept >= c.Bytes ||
		strings.Count(r.Output, "x") != c.Kept {
		t.Fatalf("huge cut %+v, %d x in output", c, strings.Count(r.Output, "x"))
	}
}
