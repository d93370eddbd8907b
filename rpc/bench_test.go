package rpc_test

import (
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

func benchEditor(b *testing.B) (*env, *rpctest.Editor, string) {
	e := &env{World: rpctest.NewWorld(b)}
	opts := e.Options()
	opts.Logger, opts.Tools = zap.NewNop(), nil // measure the relay, not logging
	ed := rpctest.Start(b, opts)
	ed.Initialize(e.WS)
	var s rpc.SessionResult
	ed.MustCall("session/new", nil, &s)
	return e, ed, s.Session.SessionID
}

// BenchmarkTurnStartToFirstDelta is the wait between pressing Enter and the
// first words appearing, against a local mock model.
func BenchmarkTurnStartToFirstDelta(b *testing.B) {
	e, ed, sid := benchEditor(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Model.Script(modeltest.Reply{Text: []string{"first", " second"}})
		var res rpc.TurnStartResult
		ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "hi"}, &res)
		ed.Wait("turn/delta", rpctest.Field("turnId", res.TurnID))
		b.StopTimer()
		ed.Wait("turn/completed", rpctest.Field("turnId", res.TurnID))
		b.StartTimer()
	}
}

// BenchmarkRelayPerDelta is the cost of carrying one streamed delta from the
// model's SSE stream to the editor's notification, amortised over a long
// answer.
func BenchmarkRelayPerDelta(b *testing.B) {
	e, ed, sid := benchEditor(b)
	const n = 2000
	deltas := strings.Split(strings.Repeat("tok ", n), " ")[:n]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Model.Script(modeltest.Reply{Text: deltas})
		var res rpc.TurnStartResult
		ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "long"}, &res)
		ed.Wait("turn/completed", rpctest.Field("turnId", res.TurnID))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/delta")
}
