package mcptest

import (
	"encoding/json"
	"fmt"
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

// ListenMode is how a Modern Raw server treats subscriptions/listen.
type ListenMode int

// Listen modes.
const (
	// ListenRefuse answers with the JSON-RPC error "method not found".
	ListenRefuse ListenMode = iota
	// ListenSilent opens the event stream and never sends anything on it.
	ListenSilent
	// ListenHang sends no reply at all, not even the response headers.
	ListenHang
	// ListenAckNothing acknowledges an empty filter (honouring none of
	// the request) and keeps the stream open.
	ListenAckNothing
	// ListenFlood acknowledges tool list changes, then sends FloodEvents
	// tools/list_changed notifications of about 100 kB each (padded in
	// _meta) and keeps the stream open.
	ListenFlood
)

// FloodEvents is how many notifications ListenFlood sends: together more
// than a client's 1 MiB limit on a single reply.
const FloodEvents = 12

// Raw is a scripted MCP server speaking plain JSON over HTTP (no SSE but
// for subscriptions/listen), for misbehaviour the SDK's server would not
// produce. Unless Modern, it answers server/discover with "method not
// found", so clients fall back to initialize; either way it advertises
// tools.listChanged.
type Raw struct {
	// Modern answers server/discover for the 2026-07-28 protocol, so
	// clients stay on it (no initialize) and open subscriptions/listen.
	Modern bool
	// Listen is how a Modern server treats subscriptions/listen.
	Listen ListenMode
	// Listens counts subscriptions/listen requests.
	Listens atomic.Int64

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
	switch {
	case in.Method == "server/discover" && r.Modern:
		result = map[string]any{
			"supportedVersions": []string{"2026-07-28"},
			"capabilities":      map[string]any{"tools": map[string]any{"listChanged": true}},
			"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "raw", "version": "1"}},
		}
	case in.Method == "subscriptions/listen" && r.Modern:
		r.Listens.Add(1)
		if r.Listen != ListenRefuse {
			r.listen(w, req)
			return
		}
		rpcErr = &RPCError{Code: -32601, Message: "method not found"}
	case in.Method == "initialize":
		result = map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": "raw", "version": "1"},
		}
	case in.Method == "ping":
		result = map[string]any{}
	case in.Method == "tools/list":
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
	case in.Method == "tools/call":
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

// listen holds a subscriptions/listen request open until the client ends
// it, sending what r.Listen says.
func (r *Raw) listen(w http.ResponseWriter, req *http.Request) {
	if r.Listen != ListenHang {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		send := func(method string, params map[string]any) {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
			_, _ = fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		switch r.Listen {
		case ListenAckNothing:
			send("notifications/subscriptions/acknowledged", map[string]any{"notifications": map[string]any{}})
		case ListenFlood:
			send("notifications/subscriptions/acknowledged", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
			for range FloodEvents {
				send("notifications/tools/list_changed", map[string]any{"_meta": map[string]any{"pad": strings.Repeat("x", 100_000)}})
			}
		default:
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
	}
	<-req.Context().Done()
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
