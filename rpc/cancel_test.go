package rpc_test

import (
	"context"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A long request (mcp/apply waiting for a launch approval) is answered
// -32800 when cancelled; the approval it waited for is resolved as
// cancelled, and the connection goes on serving.
func TestCancelRequestAnswersMinus32800AndKeepsServing(t *testing.T) {
	w := newWorld(t, map[string]any{"files": map[string]any{"command": "kin-test-no-such-server", "disabled": true}})
	ed := w.editor()
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "files"), rpctest.Field("state", "disabled")))
	ed.MustCall("mcp/setEnabled", map[string]any{"name": "files", "enabled": true}, nil)
	ctx := context.Background()
	call, err := ed.Conn.DispatchCall(ctx, "mcp/apply", nil, jsonrpc2.PickID(jsonrpc2.ID{Num: 9999}))
	if err != nil {
		t.Fatal(err)
	}
	launch := ed.Wait("approval/request", rpctest.Field("kind", "server_launch"))
	ed.Notify("$/cancelRequest", map[string]any{"id": 9999})
	err = call.Wait(ctx, nil)
	if re, ok := err.(*jsonrpc2.Error); !ok || re.Code != rpc.CodeRequestCancelled {
		t.Fatalf("got %v, want -32800", err)
	}
	ed.Wait("approval/resolved", rpctest.All(rpctest.Field("requestId", launch["requestId"]), rpctest.Field("reason", "cancelled")))
	var list rpc.SessionListResult
	ed.MustCall("session/list", nil, &list)
}

// $/cancelRequest names a request by the id the editor wrote, also one that
// jsonrpc2 cannot hold as it is (a negative number).
func TestCancelRequestWithANegativeID(t *testing.T) {
	w := newWorld(t, map[string]any{"files": map[string]any{"command": "kin-test-no-such-server"}})
	r := rpctest.StartRaw(t, w.options(zap.NewNop(), nil))
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	r.Next()
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":-7,"method":"mcp/apply"}`))
	r.Notification("approval/request") // the apply waits for the person
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":-7}}`))
	if f := r.Next(); string(f.ID) != "-7" || f.Error == nil || f.Error.Code != rpc.CodeRequestCancelled {
		t.Fatalf("got id %s error %v, want -32800 for id -7", f.ID, f.Error)
	}
}
