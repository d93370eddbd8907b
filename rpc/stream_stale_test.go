package rpc_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A request jsonrpc2 cannot read (an id that is neither a string nor a
// number) is answered -32600 and skipped. jsonrpc2 had already filled in
// its method and params, and the stream read the next message into the
// same value: when that was a response (the editor's answer to a
// workspace/applyEdit), jsonrpc2 took the refused request for a new one
// and ran it, as id 0 (the editor's own initialize id), and the answer
// was lost. A refused request must never run.
func TestARefusedRequestNeverRunsLater(t *testing.T) {
	e := newEnv(t)
	r := rpctest.StartRaw(t, e.Options())
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{}})
	if f := r.Next(); f.Error != nil {
		t.Fatalf("initialize: %v", f.Error)
	}
	r.Send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": map[string]any{}})
	f := r.Next()
	var res rpc.SessionResult
	if f.Error != nil || json.Unmarshal(f.Result, &res) != nil {
		t.Fatalf("session/new: %v", f.Error)
	}
	sid := res.Session.SessionID
	for _, id := range []string{"true", `{"n":1}`, "[3]"} {
		r.Write(rpctest.Framed(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"session/delete","params":{"sessionId":%q}}`, id, sid)) +
			rpctest.Framed(`{"jsonrpc":"2.0","id":77,"result":{"applied":true}}`)) // an answer to no request of kin's
		refused(t, r, "null", rpc.CodeInvalidRequest)
	}
	r.Write(rpctest.Framed(listReq(9)))
	if f := r.Next(); string(f.ID) != "9" {
		t.Fatalf("after the refused requests: %s %s %v (want the answer to 9)", f.ID, f.Result, f.Error)
	}
	if _, err := os.Stat(filepath.Join(e.Home, "sessions", sid+".jsonl")); err != nil {
		t.Fatalf("a refused session/delete ran: %v", err)
	}
}
