package calltool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// A result of as many empty binary blocks as a reply may hold (1 MiB) is
// summarised in one cut per kind: what the model saw is recorded with the
// call and sent to the editor, and it was one cut (about 100 bytes) per
// 17-byte block, 6 MB per call.
func TestManyBinaryPartsAreOneCut(t *testing.T) {
	const n = 60000
	raw := &mcptest.Raw{Call: func(string, json.RawMessage) (any, *mcptest.RPCError) {
		parts := make([]any, n)
		for i := range parts {
			parts[i] = map[string]any{"type": "audio"}
		}
		parts[0] = map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
		return map[string]any{"content": parts}, nil
	}}
	b := dial(t, mcptest.HTTPConfig("raw", mcptest.ServeHTTPHandler(t, raw).URL, nil))
	r := prepare(t, tools(t, b, false)["echo"], `{}`).Run(context.Background(), nil)
	sb, _ := json.Marshal(r.Saw)
	if len(sb) > 4<<10 {
		t.Fatalf("what the model saw is %d bytes for one call", len(sb))
	}
	var audio []tool.Cut
	for _, c := range r.Saw.Cuts {
		if c.What == "audio" {
			audio = append(audio, c)
		}
	}
	if len(audio) != 1 || audio[0].Bytes != 3 || !strings.Contains(audio[0].Why, "60000 audio parts") {
		t.Fatalf("cuts %+v", r.Saw.Cuts)
	}
	if r.Status != tool.StatusOutputLimit || len(r.Output) > tool.MaxOutput {
		t.Fatalf("status %s, %d bytes", r.Status, len(r.Output))
	}
}

// The same for a resource read of many binary contents.
func TestManyBinaryResourceContentsAreOneCut(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "1"}, nil)
	s.AddResource(&mcp.Resource{URI: "r://many", Name: "many"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		cs := make([]*mcp.ResourceContents, 20000)
		for i := range cs {
			cs[i] = &mcp.ResourceContents{URI: "r://many", MIMEType: "image/png"}
		}
		return &mcp.ReadResourceResult{Contents: cs}, nil
	})
	b := dial(t, mcptest.HTTPConfig("res", mcptest.ServeHTTP(t, s), nil))
	read := calltool.ResourceTools(func() []calltool.Binding { return []calltool.Binding{b} })[1]
	a, err := read.Prepare(context.Background(), tool.Env{}, json.RawMessage(`{"server":"res","uri":"r://many"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := a.Run(context.Background(), nil)
	if sb, _ := json.Marshal(r.Saw); len(sb) > 4<<10 || len(r.Saw.Cuts) != 2 || !strings.Contains(r.Saw.Cuts[0].Why, "20000 resource parts") {
		t.Fatalf("%d bytes, cuts %.500s", len(sb), sb)
	}
}
