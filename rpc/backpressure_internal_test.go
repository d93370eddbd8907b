package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// peerWriter writes frames to kin from a goroutine of its own, so that the
// test sees how far kin reads while nobody reads kin's answers.
type peerWriter struct {
	mu      sync.Mutex
	written int
	frames  chan string
}

func (p *peerWriter) run(c net.Conn) {
	for f := range p.frames {
		if _, err := c.Write([]byte(f)); err != nil {
			return
		}
		p.mu.Lock()
		p.written++
		p.mu.Unlock()
	}
}

// stalled waits until kin stopped reading (awaitRoom waits), and returns
// what was waiting then.
func stalled(t *testing.T, s *ObjectStream) (unanswered, queued int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.unanswered < MaxUnanswered && s.queued < MaxQueued {
		s.more.Wait()
	}
	return s.unanswered, s.queued
}

// An editor that sends many requests and reads none of the answers is no
// longer read once MaxQueued bytes of answers wait (or MaxUnanswered
// requests are unanswered): what kin holds stays bounded, however many
// the editor meant to send, and once it reads again every request is
// answered. (The release before kept reading: 40,000 unread session/list
// answers took it from 76 to 276 MB.)
func TestAnEditorThatStopsReadingIsNoLongerRead(t *testing.T) {
	kinEnd, editor := net.Pipe()
	s := newStream(kinEnd, nil, nil)
	answer := strings.Repeat("x", 32<<10) // a session/list of many sessions
	conn := s.NewConn(context.Background(), jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return answer, nil })))
	defer conn.Close()

	const n = 1500 // 47 MiB of answers, were they all kept
	p := &peerWriter{frames: make(chan string, n)}
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/list","params":{}}`, i)
		p.frames <- fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	close(p.frames)
	go p.run(editor)

	unanswered, queued := stalled(t, s)
	if queued > MaxQueued+len(answer)+1024 || unanswered > MaxUnanswered {
		t.Errorf("kin holds %d bytes and %d requests unanswered", queued, unanswered)
	}
	p.mu.Lock()
	sent := p.written
	p.mu.Unlock()
	if sent >= n {
		t.Fatalf("kin read all %d requests while nobody read its answers", n)
	}

	// The editor reads again: every request is answered, once.
	r := bufio.NewReader(editor)
	seen := map[string]bool{}
	for len(seen) < n {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result string          `json:"result"`
		}
		if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &m); err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		if seen[string(m.ID)] || len(m.Result) != len(answer) {
			t.Fatalf("answer %s: twice, or cut (%d bytes)", m.ID, len(m.Result))
		}
		seen[string(m.ID)] = true
	}
}

// A turn that streams while the editor reads nothing is not held up by it:
// its notifications never wait (the turn goes on to its end), consecutive
// pieces of one stream are joined while they wait, and the editor then
// reads everything, in order, every piece once.
func TestStreamingNeverWaitsForTheEditorAndLosesNothing(t *testing.T) {
	kinEnd, editor := net.Pipe()
	s := newStream(kinEnd, nil, nil)
	conn := jsonrpc2.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	defer conn.Close()

	ctx := context.Background()
	var want strings.Builder
	const pieces = 20000
	for i := range pieces { // nobody reads: none of these may wait
		piece := fmt.Sprintf("token %d; ", i)
		want.WriteString(piece)
		if err := conn.Notify(ctx, NotifyTurnDelta, TurnDelta{SessionID: "s", TurnID: "t", Text: piece}); err != nil {
			t.Fatal(err)
		}
		if i == pieces/2 { // another message in the middle keeps its place
			if err := conn.Notify(ctx, NotifyTurnToolCall, TurnToolCall{SessionID: "s", TurnID: "t", CallID: "c", Status: "pending"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := conn.Notify(ctx, NotifyTurnCompleted, TurnCompleted{SessionID: "s", TurnID: "t", Status: "completed"}); err != nil {
		t.Fatal(err)
	}
	_, queued := s.Pressure()
	if queued > 2*want.Len()+64<<10 {
		t.Errorf("%d bytes wait for %d bytes of text", queued, want.Len())
	}

	r := bufio.NewReader(editor)
	var got strings.Builder
	var order []string
	frames := 0
	for {
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := (jsonrpc2.VSCodeObjectCodec{}).ReadObject(r, &m); err != nil {
			t.Fatal(err)
		}
		frames++
		if len(order) == 0 || order[len(order)-1] != m.Method {
			order = append(order, m.Method)
		}
		if m.Method == NotifyTurnDelta {
			var d TurnDelta
			json.Unmarshal(m.Params, &d)
			if d.SessionID != "s" || d.TurnID != "t" {
				t.Fatalf("a joined delta lost its turn: %s", m.Params)
			}
			got.WriteString(d.Text)
		}
		if m.Method == NotifyTurnCompleted {
			break
		}
	}
	if got.String() != want.String() {
		t.Errorf("the text arrived changed: %d bytes, want %d", got.Len(), want.Len())
	}
	if strings.Join(order, " ") != "turn/delta turn/toolCall turn/delta turn/completed" {
		t.Errorf("order %v", order)
	}
	if frames >= pieces {
		t.Errorf("%d frames: nothing was joined", frames)
	}
}

// A peer that sends frames kin cannot read, and reads none of kin's
// answers, is no longer read once MaxQueued bytes of answers wait, as for
// any request: each skipped frame is answered with an error, and kin went
// on to the next frame without waiting, so every 21 bytes of
// "Content-Length: 0" left about 120 bytes of answer waiting, without
// bound.
func TestAPeerSendingBadFramesWithoutReadingIsNoLongerRead(t *testing.T) {
	kinEnd, peer := net.Pipe()
	defer peer.Close()
	s := newStream(kinEnd, nil, nil)
	conn := s.NewConn(context.Background(), jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	defer conn.Close()

	chunk := []byte(strings.Repeat("Content-Length: 0\r\n\r\n", 10000))
	go func() {
		for range 200 { // 42 MB of frames: their answers would be 240 MB
			if _, err := peer.Write(chunk); err != nil {
				return
			}
		}
	}()
	// Until MaxQueued bytes wait, then for a while: never much more.
	const slack = 64 << 10
	reached := time.Time{}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && (reached.IsZero() || time.Since(reached) < 2*time.Second) {
		_, queued := s.Pressure()
		if queued > MaxQueued+slack {
			t.Fatalf("%d bytes of answers wait to be written (MaxQueued is %d)", queued, MaxQueued)
		}
		if queued >= MaxQueued && reached.IsZero() {
			reached = time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	if reached.IsZero() {
		t.Fatal("the answers never filled the outbox")
	}
}

// Every notification that has to wait is looked at by streamingDelta; only
// one that can carry a piece of a stream is decoded. Every turn/*
// notification was decoded whole: a call's last, with its arguments and
// output, cost 1.2 ms each while the editor was behind. A piece is still
// recognised.
func TestStreamingDeltaDecodesOnlyWhatCarriesAPiece(t *testing.T) {
	encode := func(method string, params any) []byte {
		t.Helper()
		req := &jsonrpc2.Request{Method: method, Notif: true}
		if err := req.SetParams(params); err != nil {
			t.Fatal(err)
		}
		b, err := req.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	big := strings.Repeat("x", 64<<10)
	for _, data := range [][]byte{
		encode(NotifyTurnToolCall, TurnToolCall{SessionID: "s", TurnID: "t", CallID: "c", Name: "run", Arguments: big, Status: "completed", Output: big}),
		encode(NotifyTurnCompleted, map[string]any{"sessionId": "s", "turnId": "t", "status": "completed"}),
		encode(NotifyTurnStarted, map[string]any{"sessionId": "s", "turnId": "t", "input": big}),
	} {
		var ok bool
		if allocs := testing.AllocsPerRun(10, func() { _, ok = streamingDelta(data) }); allocs > 0 || ok {
			t.Errorf("%.60s…: a piece %v, %v allocations (decoded)", data, ok, allocs)
		}
	}
	for _, data := range [][]byte{
		encode(NotifyTurnDelta, TurnDelta{SessionID: "s", TurnID: "t", Text: "tok"}),
		encode(NotifyTurnReasoning, TurnReasoning{SessionID: "s", TurnID: "t", Text: "hm"}),
		encode(NotifyTurnToolCall, TurnToolCall{SessionID: "s", TurnID: "t", CallID: "c", Name: "run", Arguments: `{"outputDelta":1}`, Status: "running", OutputDelta: "line\n"}),
	} {
		if _, ok := streamingDelta(data); !ok {
			t.Errorf("%s: not taken for a piece of a stream", data)
		}
	}
}
