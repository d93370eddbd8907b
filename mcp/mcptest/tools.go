package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handler answers one tool call with the call's arguments.
type Handler func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)

// AddTool adds a tool with an open object schema.
func AddTool(s *mcp.Server, name, desc string, readOnly bool, h Handler) {
	t := &mcp.Tool{
		Name:        name,
		Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"n":{"type":"integer"}}}`),
	}
	if readOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args map[string]any
		if len(req.Params.Arguments) > 0 {
			_ = json.Unmarshal(req.Params.Arguments, &args)
		}
		return h(ctx, args)
	})
}

// Text is a result with one text block.
func Text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Docs is an in-process server with a counted tool and tools for every
// outcome of the result table.
type Docs struct {
	Server *mcp.Server
	// Calls counts calls of query-docs.
	Calls atomic.Int64
	// SlowStarted receives once per call of slow, when it started.
	SlowStarted chan struct{}
}

// NewDocs builds the docs server. Its tools:
//
//	query-docs  {query}  "docs for <query>" (counted in Calls)
//	lookup      read-only, "found"
//	slow        blocks until the call is cancelled (or 2 s pass)
//	big         {n} n bytes of text
//	fails       isError with "it broke"
//	rpcerr      a JSON-RPC error "boom" (code -32001)
//	image       one 4-byte PNG block
//	structured  structured content only, {"answer":42}
//	mixed       text, image, resource link, in that order
//
// and two resources, docs://readme (text) and docs://logo.png (3 bytes).
func NewDocs() *Docs {
	d := &Docs{SlowStarted: make(chan struct{}, 16)}
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	AddTool(s, "query-docs", "Query the documentation.", false, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		d.Calls.Add(1)
		return Text(fmt.Sprintf("docs for %v", a["query"])), nil
	})
	AddTool(s, "lookup", "Look something up.", true, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return Text("found"), nil
	})
	AddTool(s, "slow", "Takes forever.", false, func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		d.SlowStarted <- struct{}{}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
		return Text("late"), nil
	})
	AddTool(s, "big", "Returns n bytes.", false, func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		n, _ := a["n"].(float64)
		return Text(strings.Repeat("x", int(n))), nil
	})
	AddTool(s, "fails", "Always fails.", false, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		r := Text("it broke")
		r.IsError = true
		return r, nil
	})
	AddTool(s, "rpcerr", "Protocol error.", false, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32001, Message: "boom"}
	})
	AddTool(s, "image", "An image.", false, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2, 3, 4}, MIMEType: "image/png"}}}, nil
	})
	AddTool(s, "structured", "Structured.", false, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"answer": 42}}, nil
	})
	AddTool(s, "mixed", "Mixed content.", false, func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "first"},
			&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a"},
			&mcp.TextContent{Text: "last"},
		}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://readme", MIMEType: "text/plain", Text: "Read me first."}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "docs://logo.png", Name: "logo", MIMEType: "image/png"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "docs://logo.png", MIMEType: "image/png", Blob: []byte{9, 9, 9}}}}, nil
		})
	d.Server = s
	return d
}
