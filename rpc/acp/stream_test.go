package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
)

// pipeRW reads from a fixed input and records what is written, one
// message per Write, each also sent on wrote.
type pipeRW struct {
	io.Reader
	mu    sync.Mutex
	out   bytes.Buffer
	wrote chan struct{}
}

func (p *pipeRW) Write(b []byte) (int, error) {
	p.mu.Lock()
	n, err := p.out.Write(b)
	p.mu.Unlock()
	if p.wrote != nil {
		p.wrote <- struct{}{}
	}
	return n, err
}
func (p *pipeRW) Close() error { return nil }

// readAll reads every message the stream lets through, and returns them
// with the error answers it wrote.
func readAll(t *testing.T, input string, nAnswers int) (got []map[string]any, answers []map[string]any) {
	t.Helper()
	rw := &pipeRW{Reader: strings.NewReader(input), wrote: make(chan struct{}, 100)}
	s := newStream(rw, nil, nil)
	for {
		var m map[string]any
		if err := s.ReadObject(&m); err != nil {
			if err != io.EOF {
				t.Fatalf("ReadObject: %v", err)
			}
			break
		}
		got = append(got, m)
	}
	s.AwaitWritten() // answers are written off the read loop
	for _, line := range strings.Split(strings.TrimSpace(rw.out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("kin wrote a line that is not JSON: %q", line)
		}
		answers = append(answers, m)
	}
	return got, answers
}

func TestABadLineIsAnsweredAndTheNextOneRead(t *testing.T) {
	long := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", MaxLine) + `"}`
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		`{not json`,
		``,
		`[{"jsonrpc":"2.0","id":2,"method":"session/new"}]`,
		`{"id":3,"method":"session/list"}`,
		`"a string"`,
		long,
		`{"jsonrpc":"2.0","id":4,"method":"session/list"}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`, // the last line has no newline
	}, "\n")
	got, answers := readAll(t, input, 5)

	var methods []string
	for _, m := range got {
		methods = append(methods, m["method"].(string))
	}
	if want := "initialize session/list session/cancel"; strings.Join(methods, " ") != want {
		t.Fatalf("messages let through: %q, want %q", methods, want)
	}
	want := []struct {
		code float64
		id   any
		msg  string
	}{
		{-32700, nil, "not valid JSON"},
		{-32600, nil, "batches are not supported"},
		{-32600, float64(3), `"jsonrpc" must be "2.0"`},
		{-32600, nil, "a message is a JSON object"},
		{-32600, nil, "over the"},
	}
	if len(answers) != len(want) {
		t.Fatalf("answers: %v, want %d", answers, len(want))
	}
	for i, w := range want {
		a := answers[i]
		e := a["error"].(map[string]any)
		if a["jsonrpc"] != "2.0" || e["code"] != w.code || a["id"] != w.id || !strings.Contains(e["message"].(string), w.msg) {
			t.Errorf("answer %d = %v, want code %v id %v message with %q", i, a, w.code, w.id, w.msg)
		}
	}
}

func TestWrittenMessagesAreOneLineEach(t *testing.T) {
	rw := &pipeRW{Reader: strings.NewReader("")}
	s := newStream(rw, nil, nil)
	if err := s.WriteObject(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]string{"text": "two\nlines\u2028"}}); err != nil {
		t.Fatal(err)
	}
	s.AwaitWritten()
	rw.mu.Lock()
	out := rw.out.String()
	rw.mu.Unlock()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("wrote %q: want one line", out)
	}
}

// A line over MaxLine is skipped as it streams past; a request's is
// answered with its own id, wherever the id is on the line, as kin serve
// answers a frame over its cap. Answered with id null, a prompt the person
// sent with a large attachment was never answered: the client waited for
// it forever.
func TestALineOverTheLimitIsAnsweredWithItsID(t *testing.T) {
	huge := strings.Repeat("a", MaxLine)
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"` + huge + `"}]}}`,
		`{"jsonrpc":"2.0","method":"session/prompt","params":{"text":"` + huge + `"},"id":"last"}`,
		`{"jsonrpc":"2.0","\u0069d":-1,"method":"x","params":"` + huge + `"}`,
		`{"jsonrpc":"2.0","ID":6,"method":"x","params":"` + huge + `"}`, // a notification
		`{"jsonrpc":"2.0","id":"perm_1","result":"` + huge + `"}`,       // an answer to kin's request
		`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`,
	}, "\n")
	got, answers := readAll(t, input, 5)
	if len(got) != 1 || got[0]["id"] != float64(7) {
		t.Fatalf("messages let through: %v, want only id 7", got)
	}
	want := []any{float64(5), "last", float64(-1), nil, nil}
	if len(answers) != len(want) {
		t.Fatalf("%d answers, want %d", len(answers), len(want))
	}
	for i, id := range want {
		e, _ := answers[i]["error"].(map[string]any)
		if answers[i]["id"] != id || e == nil || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "over the") {
			t.Errorf("answer %d: id %v, error %v; want id %v and the size refusal", i, answers[i]["id"], e, id)
		}
	}
}
