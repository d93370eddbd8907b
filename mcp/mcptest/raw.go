package mcptest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// RPCError is a JSON-RPC error a Raw server replies with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Raw is a scripted MCP server speaking plain JSON over HTTP (no SSE), for
// misbehaviour the SDK's server would not produce. It answers
// server/discover with "method not found", so clients fall back to
// initialize.
type Raw struct {
	// Tools returns one page of tools for a cursor, and the next cursor.
	// Nil lists one tool, "echo".
	Tools func(cursor string) (tools []map[string]any, next string)
	// Call answers tools/call; nil answers with the text "ok".
	Call func(name string, args json.RawMessage) (result any, err *RPCError)
	// ReplyBytes pads every tools/call reply to at least this many bytes.
	ReplyBytes int
	// Delay holds every tools/call reply back (the request's context ends it).
	Delay time.Duration
	// Calls counts tools/call requests received; Lists counts tools/list.
	Calls, Lists atomic.Int64
}

type rawRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// ServeHTTP implements http.Handler.
func (r *Raw) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodDelete {
		return
	}
	if req.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(req.Body)
	var in rawRequest
	if json.Unmarshal(body, &in) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if len(in.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any
	var rpcErr *RPCError
	switch in.Method {
	case "initialize":
		result = map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": "raw", "version": "1"},
		}
	case "ping":
		result = map[string]any{}
	case "tools/list":
		r.Lists.Add(1)
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(in.Params, &p)
		tools, next := []map[string]any{Tool("echo", "Echo.", false)}, ""
		if r.Tools != nil {
			tools, next = r.Tools(p.Cursor)
		}
		res := map[string]any{"tools": tools}
		if next != "" {
			res["nextCursor"] = next
		}
		result = res
	case "tools/call":
		r.Calls.Add(1)
		if r.Delay > 0 {
			select {
			case <-req.Context().Done():
				return
			case <-time.After(r.Delay):
			}
		}
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(in.Params, &p)
		if r.Call != nil {
			result, rpcErr = r.Call(p.Name, p.Arguments)
		} else {
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}
		}
		if r.ReplyBytes > 0 {
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("x", r.ReplyBytes)}}}
		}
	default:
		rpcErr = &RPCError{Code: -32601, Message: "method not found"}
	}
	out := map[string]any{"jsonrpc": "2.0", "id": in.ID}
	if rpcErr != nil {
		out["error"] = rpcErr
	} else {
		out["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// Tool is a tool definition for Raw.Tools.
func Tool(name, desc string, readOnly bool) map[string]any {
	t := map[string]any{
		"name":        name,
		"description": desc,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}},
	}
	if readOnly {
		t["annotations"] = map[string]any{"readOnlyHint": true}
	}
	return t
}
