package rpc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// A message with "id" written twice, the last one null, is a notification
// to jsonrpc2 (its decoder keeps the last), which kin does not answer. kin
// counted it as a request in flight, never answered, so after MaxUnanswered
// of them it stopped reading the connection for good: the editor's next
// request was never read. (Such a message is now refused, as a request
// with a null id: the refusals are answers, and reading goes on.)
func TestRepeatedIDKeysDoNotStopKinReading(t *testing.T) {
	r := rawEditor(t)
	var b strings.Builder
	for i := range rpc.MaxUnanswered + 8 {
		b.WriteString(rpctest.Framed(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"$/noise","id":null}`, 1000+i)))
	}
	r.Write(b.String())
	for range rpc.MaxUnanswered + 8 {
		refused(t, r, "null", rpc.CodeInvalidRequest)
	}
	r.Write(rpctest.Framed(listReq(2)))
	answered(t, r, "2")
}
