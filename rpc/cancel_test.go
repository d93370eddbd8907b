package rpc_test

import (
	"context"
	"testing"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// slowMCP is a manager whose apply waits until its request is cancelled.
type slowMCP struct{ started chan struct{} }

func (m *slowMCP) Tools() []tool.Tool                         { return nil }
func (m *slowMCP) Start(context.Context)                      {}
func (m *slowMCP) List() any                                  { return map[string]any{"servers": []any{}} }
func (m *slowMCP) Edit(context.Context, rpc.MCPEdit) error    { return nil }
func (m *slowMCP) Check(context.Context, string) (any, error) { return nil, nil }
func (m *slowMCP) Login(context.Context, string) (any, error) { return nil, nil }
func (m *slowMCP) TrustGrants() []permission.Grant            { return nil }
func (m *slowMCP) RevokeTrust(string) (bool, error)           { return false, nil }
func (m *slowMCP) Close()                                     {}
func (m *slowMCP) Apply(ctx context.Context) (any, error) {
	close(m.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestCancelRequestAnswersMinus32800AndKeepsServing(t *testing.T) {
	e := newEnv(t)
	m := &slowMCP{started: make(chan struct{})}
	opts := e.Options()
	opts.MCP = func([]string, rpc.MCPHost) rpc.MCP { return m }
	ed := rpctest.Start(t, opts)
	ed.Initialize(e.WS)
	ctx := context.Background()
	call, err := ed.Conn.DispatchCall(ctx, "mcp/apply", nil, jsonrpc2.PickID(jsonrpc2.ID{Num: 9999}))
	if err != nil {
		t.Fatal(err)
	}
	<-m.started
	ed.Notify("$/cancelRequest", map[string]any{"id": 9999})
	err = call.Wait(ctx, nil)
	if re, ok := err.(*jsonrpc2.Error); !ok || re.Code != rpc.CodeRequestCancelled {
		t.Fatalf("got %v, want -32800", err)
	}
	var list rpc.SessionListResult
	ed.MustCall("session/list", nil, &list)
}

// $/cancelRequest names a request by the id the editor wrote, also one that
// jsonrpc2 cannot hold as it is (a negative number).
func TestCancelRequestWithANegativeID(t *testing.T) {
	e := newEnv(t)
	m := &slowMCP{started: make(chan struct{})}
	opts := e.Options()
	opts.MCP = func([]string, rpc.MCPHost) rpc.MCP { return m }
	r := rpctest.StartRaw(t, opts)
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	r.Next()
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":-7,"method":"mcp/apply"}`))
	<-m.started
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":-7}}`))
	if f := r.Next(); string(f.ID) != "-7" || f.Error == nil || f.Error.Code != rpc.CodeRequestCancelled {
		t.Fatalf("got id %s error %v, want -32800 for id -7", f.ID, f.Error)
	}
}
