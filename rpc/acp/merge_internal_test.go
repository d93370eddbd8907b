package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent"

	"github.com/sourcegraph/jsonrpc2"
)

// A turn that streams while the client reads nothing holds about its own
// text, not an envelope per piece. kin acp queued every session/update
// chunk whole: the 20,000 small pieces below held 3,688,857 bytes for
// 308,890 bytes of text (a one-byte piece costs its whole envelope, some
// 150 bytes), and a client that stopped reading for a long turn had kin
// hold the envelopes of all of it. Joined, they hold 310,402. Consecutive waiting chunks of one session, one kind and one
// message are joined into one chunk, as kin serve joins turn/delta; the
// client concatenates chunks, so it reads the same text, in the same
// order, and nothing is joined across another update or another session.
func TestWaitingChunksOfOneMessageAreJoined(t *testing.T) {
	kinEnd, client := net.Pipe()
	s := newStream(kinEnd, nil, nil)
	conn := jsonrpc2.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	defer conn.Close()

	ctx := context.Background()
	notify := func(sid string, u any) {
		t.Helper()
		if err := conn.Notify(ctx, NotifySessionUpdate, SessionNotification{SessionID: sid, Update: u}); err != nil {
			t.Fatal(err)
		}
	}
	chunk := func(kind, text, msg string) ContentChunk {
		return ContentChunk{SessionUpdate: kind, Content: TextBlock(text), MessageID: msg}
	}
	// What the client must see: per session, the kinds in order, each
	// with its text.
	type run struct{ sid, kind, msg, text string }
	var want []run
	add := func(sid, kind, msg, text string) {
		if n := len(want); n > 0 && want[n-1].sid == sid && want[n-1].kind == kind && want[n-1].msg == msg && kind != UpdateToolCall {
			want[n-1].text += text
			return
		}
		want = append(want, run{sid, kind, msg, text})
	}
	text := 0
	const pieces = 20000
	for i := range pieces { // nobody reads: none of these may wait
		kind := UpdateAgentMessage
		if i < pieces/10 {
			kind = UpdateAgentThought
		}
		piece := fmt.Sprintf("t%d <\"é\u2028> ", i)
		text += len(piece)
		notify("s", chunk(kind, piece, ""))
		add("s", kind, "", piece)
		switch i {
		case pieces / 2: // a tool call in the middle keeps its place, and splits the message
			notify("s", ToolCall{SessionUpdate: UpdateToolCall, ToolCallID: "c", Title: "read", Status: StatusPending})
			add("s", UpdateToolCall, "", "")
		case pieces/2 + 100: // another message id is another message
			notify("s", chunk(UpdateAgentMessage, "other message", "m2"))
			add("s", UpdateAgentMessage, "m2", "other message")
		case pieces/2 + 200: // another session's chunk is its own
			notify("s2", chunk(UpdateAgentMessage, "elsewhere", ""))
			add("s2", UpdateAgentMessage, "", "elsewhere")
		}
	}
	_, queued := s.Pressure()
	t.Logf("%d bytes wait for %d bytes of text", queued, text)
	if queued > 2*text+64<<10 {
		t.Errorf("%d bytes wait for %d bytes of text", queued, text)
	}

	// The last update: the client has read everything once it reads it (a
	// piece lost or split off fails the comparison, never hangs the read).
	notify("s", ToolCall{SessionUpdate: UpdateToolCall, ToolCallID: "end", Title: "end", Status: StatusPending})
	add("s", UpdateToolCall, "", "")

	r := bufio.NewReader(client)
	var got []run
	frames := 0
	for end := false; !end; {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		frames++
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string          `json:"sessionId"`
				Update    json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil || m.Method != NotifySessionUpdate {
			t.Fatalf("line %q: %v", line, err)
		}
		var u struct {
			SessionUpdate string       `json:"sessionUpdate"`
			Content       ContentBlock `json:"content"`
			MessageID     string       `json:"messageId"`
			ToolCallID    string       `json:"toolCallId"`
		}
		json.Unmarshal(m.Params.Update, &u)
		end = u.ToolCallID == "end"
		sid := m.Params.SessionID
		if n := len(got); n > 0 && got[n-1].sid == sid && got[n-1].kind == u.SessionUpdate && got[n-1].msg == u.MessageID && u.SessionUpdate != UpdateToolCall {
			got[n-1].text += u.Content.Text
		} else {
			got = append(got, run{sid, u.SessionUpdate, u.MessageID, u.Content.Text})
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d runs of updates, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("run %d: %s %s %q, %d bytes; want %s %s %q, %d bytes", i, got[i].sid, got[i].kind, got[i].msg, len(got[i].text), want[i].sid, want[i].kind, want[i].msg, len(want[i].text))
		}
	}
	if frames >= pieces {
		t.Errorf("%d lines: nothing was joined", frames)
	}
}

// Only an agent message's or thought's text chunk is a piece of a stream;
// its stream is everything but the text, and a joined chunk is the first
// with the texts of both.
func TestMessageChunkIsTheChunkWithoutItsText(t *testing.T) {
	encode := func(sid string, u any) []byte {
		t.Helper()
		req := &jsonrpc2.Request{Method: NotifySessionUpdate, Notif: true}
		if err := req.SetParams(SessionNotification{SessionID: sid, Update: u}); err != nil {
			t.Fatal(err)
		}
		b, err := req.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, u := range []any{
		ContentChunk{SessionUpdate: UpdateUserMessage, Content: TextBlock("x")},
		ContentChunk{SessionUpdate: UpdateAgentMessage, Content: ContentBlock{Type: contentTypeResourceRef, URI: "file:///a", Name: "a"}},
		ContentChunk{SessionUpdate: UpdateAgentMessage, Content: ContentBlock{Type: contentTypeText, Text: "x", MimeType: "text/plain"}},
		ToolCall{SessionUpdate: UpdateToolCall, ToolCallID: "c", Title: `"content":{"type":"text","text":"x"}`},
	} {
		if _, ok := messageChunk(encode("s", u)); ok {
			t.Errorf("%+v was taken for a piece of a message", u)
		}
	}

	a, okA := messageChunk(encode("s", ContentChunk{SessionUpdate: UpdateAgentThought, Content: TextBlock("a<\"")}))
	b, okB := messageChunk(encode("s", ContentChunk{SessionUpdate: UpdateAgentThought, Content: TextBlock("\u2028b")}))
	other, _ := messageChunk(encode(`s","update":{}`, ContentChunk{SessionUpdate: UpdateAgentThought, Content: TextBlock("c")}))
	if !okA || !okB || a.Stream != b.Stream || a.Stream == other.Stream {
		t.Fatalf("streams %q %q %q", a.Stream, b.Stream, other.Stream)
	}
	want := encode("s", ContentChunk{SessionUpdate: UpdateAgentThought, Content: TextBlock("a<\"\u2028b")})
	if got := a.Join(a.Text + b.Text); string(got) != string(want) {
		t.Errorf("joined:\n%s\nwant\n%s", got, want)
	}
}

// A running call's output goes to the client as tool_call_updates whose
// content replaces what the card showed: the whole output so far, up to
// outputKeep bytes, every outputEvery. A client that stopped reading
// during a long command had kin keep every one of them: 64 KB ten times a
// second, without bound (the 300 updates below held 19.7 MB). A waiting
// update of a running call's output is replaced by the next one of the
// same call: the client ends with the same card, and kin holds one.
func TestAWaitingOutputUpdateIsReplacedByTheNext(t *testing.T) {
	kinEnd, client := net.Pipe()
	s := newStream(kinEnd, nil, nil)
	conn := jsonrpc2.NewConn(context.Background(), s, jsonrpc2.HandlerWithError(
		func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request) (any, error) { return nil, nil }))
	defer conn.Close()
	ctx := context.Background()
	output := func(call, text string) ToolCall {
		return ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: call, Status: StatusInProgress,
			Content: []ToolCallContent{textContent(text)}, Meta: kinMeta(agent.CallRunning, "")}
	}
	notify := func(u any) {
		t.Helper()
		if err := conn.Notify(ctx, NotifySessionUpdate, SessionNotification{SessionID: "s", Update: u}); err != nil {
			t.Fatal(err)
		}
	}
	const updates = 300
	for i := range updates { // nobody reads
		notify(output("c1", fmt.Sprintf("%d %s", i, strings.Repeat("x", outputKeep))))
		if i == updates/2 { // another call's output, between, keeps its place
			notify(output("c2", "other"))
		}
	}
	notify(ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c1", Status: StatusCompleted})
	_, queued := s.Pressure()
	t.Logf("%d bytes wait", queued)
	if queued > 4*outputKeep+64<<10 {
		t.Errorf("%d bytes wait for a card of %d bytes", queued, outputKeep)
	}

	r := bufio.NewReader(client)
	var seen []string
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Params struct {
				Update ToolCall `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		u := m.Params.Update
		text := ""
		if len(u.Content) == 1 && u.Content[0].Content != nil {
			text, _, _ = strings.Cut(u.Content[0].Content.Text, " ")
		}
		seen = append(seen, u.ToolCallID+" "+u.Status+" "+text)
		if u.Status == StatusCompleted {
			break
		}
	}
	// The first is written at once; the last update before c2's and the
	// last of all are what the card shows then.
	last := func(i int) string { return fmt.Sprintf("c1 %s %d", StatusInProgress, i) }
	got := strings.Join(seen, ", ")
	if !strings.HasPrefix(got, last(0)) || !strings.Contains(got, last(updates/2)+", c2 "+StatusInProgress+" other, ") ||
		!strings.HasSuffix(got, last(updates-1)+", c1 "+StatusCompleted+" ") {
		t.Errorf("the client saw %s", got)
	}
	if len(seen) > 10 {
		t.Errorf("%d updates written: none was replaced", len(seen))
	}
}

// What an update is, is read where its update starts, right after the
// session id, never from bytes anywhere in it. A tool call whose input
// held what looks like a message chunk was taken for one: the next such
// call, the same but for that text, would have been joined into it and
// lost. (kin's rawInput is a decoded map, whose keys encode sorted, so it
// cannot hold this spelling today; the recognition does not depend on it.)
func TestAnUpdateIsKnownByItsStart(t *testing.T) {
	req := &jsonrpc2.Request{Method: NotifySessionUpdate, Notif: true}
	type input struct {
		A      int          `json:"a"`
		Update ContentChunk `json:"update"`
	}
	call := ToolCall{SessionUpdate: UpdateToolCall, ToolCallID: "c", Status: StatusPending,
		RawInput: input{1, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock("x")}}}
	if err := req.SetParams(SessionNotification{SessionID: "s", Update: call}); err != nil {
		t.Fatal(err)
	}
	b, err := req.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := streamed(b); ok {
		t.Errorf("a tool call was taken for a piece of a stream: %+v", d)
	}
}

// Every notification that has to wait is looked at by streamed; only a
// running call's output update is decoded. A completed call's update, with
// its output, was decoded whole (1.36 ms for 64 KB), and every other one
// scanned through three times.
func TestStreamedDecodesOnlyARunningCallsOutput(t *testing.T) {
	encode := func(u any) []byte {
		t.Helper()
		req := &jsonrpc2.Request{Method: NotifySessionUpdate, Notif: true}
		if err := req.SetParams(SessionNotification{SessionID: "s", Update: u}); err != nil {
			t.Fatal(err)
		}
		b, err := req.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	big := []ToolCallContent{textContent(strings.Repeat("x\n", 32<<10))}
	for _, u := range []any{
		ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c", Status: StatusCompleted, Content: big, Meta: kinMeta(agent.CallRunning, "")},
		ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c", Title: "run", Status: StatusInProgress, Content: big},
		ToolCall{SessionUpdate: UpdateToolCall, ToolCallID: "c", Status: StatusInProgress, Content: big},
	} {
		data := encode(u)
		var ok bool
		if allocs := testing.AllocsPerRun(10, func() { _, ok = streamed(data) }); allocs > 0 || ok {
			t.Errorf("%.90s…: a piece %v, %v allocations (decoded)", data, ok, allocs)
		}
	}
	running := encode(ToolCall{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c", Status: StatusInProgress, Content: big, Meta: kinMeta(agent.CallRunning, "")})
	if d, ok := streamed(running); !ok || !d.Replace {
		t.Errorf("a running call's output: %+v %v", d, ok)
	}
}
