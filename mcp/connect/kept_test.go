package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/kin-dev/kin/mcp/config"
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

// A connect that fails leaves nothing kept: its replies are the
// connection's like any other, and a failed Dial has no Close to forget
// them (a server answering every request with a resultType kin does not
// handle failed each reconnect and kept its replies for good).
func TestAFailedConnectKeepsNoReplies(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"junk","pad":%q}}`, req.ID, strings.Repeat("x", 1<<10))
	}))
	defer ts.Close()
	count := func() int {
		kept.mu.Lock()
		defer kept.mu.Unlock()
		return len(kept.byKey)
	}
	before := count()
	if _, err := Dial(context.Background(), config.Server{Name: "junk", Scope: config.ScopeGlobal, Transport: config.TransportHTTP, URL: ts.URL + "/mcp"}, Options{Timeout: 5 * time.Second}); err == nil {
		t.Fatal("connected to a server that answers nothing kin handles")
	}
	if n := count() - before; n != 0 {
		t.Errorf("a failed connect left %d replies kept", n)
	}
}
