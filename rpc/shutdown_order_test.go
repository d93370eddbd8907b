package rpc_test

import (
	"testing"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// PROTOCOL.md, shutdown: "Requests sent after it get -32600"; the ones sent
// before it that cannot stop are waited for. A person who revokes a grant
// and closes the editor makes it send grants/revoke and then shutdown at
// once: the revoke arrived first, but was refused as "shut down" when its
// goroutine had not yet started, and the grant stayed. Requests that
// arrived before shutdown run (grants/revoke of an unknown id answers
// not found, which only running it can say); those after are refused.
func TestRequestsSentBeforeShutdownRun(t *testing.T) {
	for range 10 {
		r := rawEditor(t)
		// One write, as an editor's buffered stdin delivers them: kin reads
		// them back to back.
		r.Write(rpctest.Framed(`{"jsonrpc":"2.0","id":2,"method":"grants/revoke","params":{"id":"g_none"}}`) +
			rpctest.Framed(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{}}`) +
			rpctest.Framed(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`) +
			rpctest.Framed(`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{}}`))
		expect(t, r, map[string]int64{"2": rpc.CodeNotFound, "3": 0, "4": 0, "5": rpc.CodeInvalidRequest})
	}
}
