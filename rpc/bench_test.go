package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// benchEditor is an initialized editor on a server that logs nothing (a
// benchmark measures the service, not logging).
func benchEditor(b *testing.B, w *rpctest.World) *rpctest.Editor {
	opts := w.Options()
	opts.Logger = zap.NewNop()
	ed := rpctest.Start(b, opts)
	ed.Initialize(w.WS)
	return ed
}

// BenchmarkTurnStartToFirstDelta is the wait between pressing Enter and the
// first words appearing, against a local mock model. Every operation is a
// first turn in a fresh session, so the number does not grow with the
// iteration count; the median over operations is reported.
func BenchmarkTurnStartToFirstDelta(b *testing.B) {
	w := rpctest.NewWorld(b)
	ed := benchEditor(b, w)
	var first rpctest.Samples
	for b.Loop() {
		b.StopTimer()
		sid := newSession(b, ed)
		w.Model.Script(modeltest.Reply{Text: []string{"first", " second"}})
		b.StartTimer()
		at := time.Now()
		var res rpc.TurnStartResult
		ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "hi"}, &res)
		ed.Wait("turn/delta", rpctest.Field("turnId", res.TurnID))
		first.Since(at)
		b.StopTimer()
		ed.Wait("turn/completed", rpctest.Field("turnId", res.TurnID))
		b.StartTimer()
	}
	first.Report(b, "ms/first-delta")
}

// slowHome is a KIN_HOME whose sessions make session/list and
// session/resume slow: 1,000 stored sessions of ten turns each, and one
// session of 30,000 records. The logs are written directly (a benchmark
// that made them through turns would take minutes to set up).
func slowHome(b *testing.B) (home, bigID string) {
	b.Helper()
	home = b.TempDir()
	dir := filepath.Join(home, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	for i := range 1000 {
		writeBenchSession(b, dir, fmt.Sprintf("s_bench_%04d", i), 10, at.Add(time.Duration(i)*time.Second))
	}
	bigID = "s_bench_big"
	writeBenchSession(b, dir, bigID, 6000, at) // 6,000 turns of 5 records
	return home, bigID
}

func writeBenchSession(b *testing.B, dir, id string, turns int, at time.Time) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	put := func(r session.Record) {
		r.Time = at
		if err := enc.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
	put(session.Record{Type: session.TypeSession, SessionID: id, Title: "benchmark session " + id})
	output := strings.Repeat("ok  \tgithub.com/kin-dev/kin/agent\t0.412s\n", 10)
	for t := range turns {
		tid, cid := fmt.Sprintf("t_%08x", t), fmt.Sprintf("call_%08x", t)
		put(session.Record{Type: session.TypeUser, TurnID: tid, Text: "run the tests of the agent package and tell me what failed"})
		put(session.Record{Type: session.TypeCall, TurnID: tid, CallID: cid, Name: "bash", Kind: tool.KindExecute, Arguments: `{"command":"go test ./agent/..."}`})
		put(session.Record{Type: session.TypeResult, TurnID: tid, CallID: cid, Name: "bash", Title: "Run go test ./agent/...", Status: "completed", Output: output})
		put(session.Record{Type: session.TypeAssist, TurnID: tid, Text: "All tests of the agent package pass; nothing failed. The slowest was the session store at 0.4 s."})
		put(session.Record{Type: session.TypeTurn, TurnID: tid, Status: "completed", Usage: &session.Usage{InputTokens: 812, OutputTokens: 40}})
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), buf.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
}

// dispatch sends a request without waiting; the returned func waits for
// its answer and returns when it came.
func dispatch(b *testing.B, ed *rpctest.Editor, method string, params any) func() time.Time {
	w, err := ed.Conn.DispatchCall(context.Background(), method, params)
	if err != nil {
		b.Fatal(err)
	}
	return func() time.Time {
		ctx, cancel := context.WithTimeout(context.Background(), rpctest.Timeout)
		defer cancel()
		var raw json.RawMessage
		if err := w.Wait(ctx, &raw); err != nil {
			if _, isRPC := err.(*jsonrpc2.Error); !isRPC {
				b.Fatalf("%s: %v", method, err)
			}
		}
		return time.Now()
	}
}

// BenchmarkBehindSlowRequests is the wait of the requests a person makes
// in a hurry (stop the turn, answer an approval) when the editor sent them
// right behind a session/list of 1,000 sessions and a session/resume of
// 30,000 records. Every operation runs on a fresh connection, so the list
// and the resume are the first of their process (cold), and measures from
// the moment the editor starts sending the three requests back to back to
// each one's answer. Medians per operation.
func BenchmarkBehindSlowRequests(b *testing.B) {
	home, big := slowHome(b)
	run := func(b *testing.B, name string, behind bool, prepare func(*rpctest.World, *rpctest.Editor) (method string, params any, finish func())) {
		var fast, list, resume rpctest.Samples
		for b.Loop() {
			b.StopTimer()
			w := rpctest.NewWorld(b)
			w.Home = home
			ed := benchEditor(b, w)
			method, params, finish := prepare(w, ed)
			b.StartTimer()
			at := time.Now()
			var listDone, resumeDone func() time.Time
			if behind {
				listDone = dispatch(b, ed, "session/list", nil)
				resumeDone = dispatch(b, ed, "session/resume", rpc.SessionIDParams{SessionID: big})
			}
			fastDone := dispatch(b, ed, method, params)
			fast.Add(fastDone().Sub(at))
			if behind {
				list.Add(listDone().Sub(at))
				resume.Add(resumeDone().Sub(at))
			}
			b.StopTimer()
			finish()
			ed.Conn.Close()
			<-ed.Done
			b.StartTimer()
		}
		fast.Report(b, "ms/"+name)
		if behind {
			list.Report(b, "ms/session-list")
			resume.Report(b, "ms/session-resume")
		}
	}
	approval := func(w *rpctest.World, ed *rpctest.Editor) (string, any, func()) {
		sid := newSession(b, ed)
		w.Model.Script(modeltest.Reply{Calls: []modeltest.Call{{Name: "bash", Arguments: `{"command":"true"}`}}}, modeltest.Reply{Text: []string{"ok"}})
		var res rpc.TurnStartResult
		ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "run true"}, &res)
		req := ed.Wait("approval/request", rpctest.Field("turnId", res.TurnID))
		return "approval/respond", rpc.ApprovalRespondParams{RequestID: req["requestId"].(string), Decision: "deny"}, func() {
			ed.Wait("turn/completed", rpctest.Field("turnId", res.TurnID))
		}
	}
	cancel := func(w *rpctest.World, ed *rpctest.Editor) (string, any, func()) {
		sid := newSession(b, ed)
		hold := make(chan struct{})
		w.Model.Script(modeltest.Reply{Text: []string{"a", "b"}, Hold: hold})
		var res rpc.TurnStartResult
		ed.MustCall("turn/start", rpc.TurnStartParams{SessionID: sid, Input: "talk"}, &res)
		ed.Wait("turn/delta", rpctest.Field("turnId", res.TurnID))
		return "turn/cancel", rpc.SessionIDParams{SessionID: sid}, func() {
			ed.Wait("turn/completed", rpctest.Field("turnId", res.TurnID))
			close(hold)
		}
	}
	// Alone: the same request with nothing before it, for comparison.
	b.Run("approval-respond", func(b *testing.B) { run(b, "approval-respond", true, approval) })
	b.Run("approval-respond-alone", func(b *testing.B) { run(b, "approval-respond", false, approval) })
	b.Run("turn-cancel", func(b *testing.B) { run(b, "turn-cancel", true, cancel) })
	b.Run("turn-cancel-alone", func(b *testing.B) { run(b, "turn-cancel", false, cancel) })
}
