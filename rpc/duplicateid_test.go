package rpc_test

import (
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// JSON-RPC: a request's id is unique among the requests not yet answered.
// An editor that sent a second request with the id of one still running
// (an mcp/apply waiting for a launch approval) got two answers with that
// id, the second request's first, which it could take for the first's;
// and the second took the id over, so a $/cancelRequest for it, sent once
// the second was answered, cancelled nothing and the first ran on. The
// second is refused at once, with an error that says why, and the first
// keeps its id: it is the one a cancel request reaches.
func TestADuplicateRequestIDIsRefusedAndTheFirstKeepsIt(t *testing.T) {
	w := newWorld(t, map[string]any{"files": map[string]any{"command": "kin-test-no-such-server"}})
	r := rpctest.StartRaw(t, w.options(zap.NewNop(), nil))
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	r.Next()
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":5,"method":"mcp/apply"}`))
	r.Notification("approval/request") // the apply waits for the person

	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":5,"method":"session/list"}`))
	f := r.Next()
	if string(f.ID) != "5" || f.Error == nil || f.Error.Code != rpc.CodeInvalidRequest || !strings.Contains(f.Error.Message, "id") {
		t.Fatalf("a second request with id 5: id %s error %v result %s, want an invalid-request error naming the id", f.ID, f.Error, f.Result)
	}

	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}`))
	if f := r.Next(); string(f.ID) != "5" || f.Error == nil || f.Error.Code != rpc.CodeRequestCancelled {
		t.Fatalf("cancelling id 5: id %s error %v, want -32800 for the mcp/apply", f.ID, f.Error)
	}
	// Once answered, the id is free again.
	r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":5,"method":"session/list"}`))
	if f := r.Next(); string(f.ID) != "5" || f.Error != nil {
		t.Fatalf("id 5 reused after its answer: %v", f.Error)
	}
}
