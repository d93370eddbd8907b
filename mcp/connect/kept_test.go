package connect

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// replyErr is the error the SDK hands the caller for a reply checkReply
// turned into one.
func replyErr(t *testing.T, msg []byte) error {
	t.Helper()
	var r struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal(msg, &r); err != nil || r.Error == nil {
		t.Fatalf("not an error reply: %s", msg)
	}
	return r.Error
}

// Attack: one connected server writes a flood of replies with a resultType
// kin does not handle, to requests kin never sent (on stdio any id will
// do). Each was kept, in one store for every connection, until taken:
// never, so the flood pushed out the reply of another server's call that
// had become a task before calltool took it (the call then read as that
// server's own error, failed: the model may run it again while its task
// runs), and held the flood (up to 256 replies of 1 MiB) for as long as
// kin ran, the server long gone. A connection's flood now pushes out only
// its own replies, and what it left goes when it closes.
func TestAFloodOfUnhandledRepliesTouchesOnlyItsConnection(t *testing.T) {
	victim, flooder := &PropertyOrder{}, &PropertyOrder{}
	task := checkReply([]byte(`{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"t-1","status":"working"}}`), "tools/call", nil, victim)
	for i := range maxKept + 10 {
		checkReply(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"junk"}}`, 1000+i), "", nil, flooder)
	}
	u, ok := UnhandledResult(replyErr(t, task))
	if !ok || u.ResultType != "task" {
		t.Fatalf("another connection's flood took the task reply: %+v %v", u, ok)
	}
	if n := keptBy(flooder); n != maxKept {
		t.Errorf("the flooding connection holds %d replies, want at most %d", n, maxKept)
	}
	forgetKept(flooder)
	if n := keptBy(flooder); n != 0 {
		t.Errorf("a closed connection still holds %d replies", n)
	}
	// A reply taken is no longer held, and is taken once.
	again := checkReply([]byte(`{"jsonrpc":"2.0","id":8,"result":{"resultType":"task","taskId":"t-2","status":"working"}}`), "tools/call", nil, victim)
	err := replyErr(t, again)
	if _, ok := UnhandledResult(err); !ok || keptBy(victim) != 0 {
		t.Fatalf("taken: %v, still held %d", ok, keptBy(victim))
	}
	if _, ok := UnhandledResult(err); ok {
		t.Fatal("taken twice")
	}
}

// keptBy is how many results of owner are kept.
func keptBy(owner any) int {
	kept.mu.Lock()
	defer kept.mu.Unlock()
	return len(kept.order[owner])
}
