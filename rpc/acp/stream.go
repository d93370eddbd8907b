package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/kin-dev/kin/rpc"
)

// MaxLine is the longest message kin reads, as kin serve's MaxFrame. A
// longer line is answered with an error and skipped as it streams past,
// never buffered.
const MaxLine = rpc.MaxFrame

// stream is a jsonrpc2.ObjectStream for ACP's framing: one JSON-RPC message
// per line, UTF-8, no embedded newlines. jsonrpc2's own line codec cannot
// recover from a line it cannot decode (its decoder keeps the broken input);
// here such a line is answered with a JSON-RPC error and reading goes on
// with the next line, so a client with a bug loses one message, not its
// session. Every message kin writes carries "jsonrpc":"2.0" (jsonrpc2 adds
// it; the official SDK rejects a message without it), and every message
// read must carry it too.
type stream struct {
	rwc io.ReadWriteCloser
	r   *bufio.Reader

	// wmu guards w and broken.
	wmu    sync.Mutex
	w      *bufio.Writer
	broken bool

	onBad  func(error) // reports a skipped line to the log
	onGone func(error) // the client stopped reading (a write failed)

	// rejects holds the answers to skipped lines, which a goroutine of
	// their own writes: ReadObject runs on jsonrpc2's read loop, which must
	// never wait on a write (see Server.Handle).
	rejects chan []byte
	closed  chan struct{}
	close1  sync.Once
}

func newStream(rwc io.ReadWriteCloser, onBad, onGone func(error)) *stream {
	s := &stream{rwc: rwc, r: bufio.NewReaderSize(rwc, 64<<10), w: bufio.NewWriterSize(rwc, 64<<10), onBad: onBad, onGone: onGone,
		rejects: make(chan []byte, 64), closed: make(chan struct{})}
	go s.writeRejects()
	return s
}

func (s *stream) writeRejects() {
	for {
		select {
		case b := <-s.rejects:
			_ = s.WriteObject(json.RawMessage(b))
		case <-s.closed:
			return
		}
	}
}

// WriteObject implements jsonrpc2.ObjectStream: the JSON on one line.
// encoding/json escapes control characters in strings, so a message never
// holds a raw newline. The object is encoded before the lock is taken, so a
// large reply does not hold up other writers. A failed write means the
// client is gone: onGone is told once, and nothing more is written.
func (s *stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	if s.broken {
		s.wmu.Unlock()
		return io.ErrClosedPipe
	}
	s.w.Write(data)
	s.w.WriteByte('\n')
	err = s.w.Flush()
	s.broken = err != nil
	s.wmu.Unlock()
	if err != nil && s.onGone != nil {
		s.onGone(err)
	}
	return err
}

// Close implements jsonrpc2.ObjectStream.
func (s *stream) Close() error {
	s.close1.Do(func() { close(s.closed) })
	return s.rwc.Close()
}

// badLine is a line that was skipped; reading goes on.
type badLine struct {
	code int
	msg  string
	id   json.RawMessage // the request's own id, when it could be read
}

func (e *badLine) Error() string { return e.msg }

// ReadObject implements jsonrpc2.ObjectStream. Only a closed or broken
// input ends it.
func (s *stream) ReadObject(v any) error {
	for {
		line, err := s.readLine()
		var bad *badLine
		if errors.As(err, &bad) {
			s.reject(bad)
			continue
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			continue // blank lines between messages are harmless
		}
		if bad := check(line); bad != nil {
			s.reject(bad)
			continue
		}
		if err := json.Unmarshal(line, v); err != nil {
			s.reject(&badLine{rpc.CodeInvalidRequest, "invalid request: " + err.Error(), idOf(line)})
			continue
		}
		return nil
	}
}

// envelope is what kin checks of every message before jsonrpc2 sees it.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
}

// check refuses what is not one JSON-RPC 2.0 message: text that is not
// JSON (-32700, as the JSON-RPC spec says), a batch (ACP has none, and the
// SDK answers one the same way), anything but an object, or a message
// without "jsonrpc":"2.0".
func check(line []byte) *badLine {
	if !json.Valid(line) {
		return &badLine{rpc.CodeParseError, "parse error: the line is not valid JSON", nil}
	}
	switch line[0] {
	case '[':
		return &badLine{rpc.CodeInvalidRequest, "JSON-RPC batches are not supported", nil}
	case '{':
	default:
		return &badLine{rpc.CodeInvalidRequest, "invalid request: a message is a JSON object", nil}
	}
	var e envelope
	if err := json.Unmarshal(line, &e); err != nil {
		return &badLine{rpc.CodeInvalidRequest, "invalid request: " + err.Error(), nil}
	}
	if e.JSONRPC == nil || *e.JSONRPC != "2.0" {
		return &badLine{rpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`, answerable(e)}
	}
	return nil
}

// answerable is the id to answer a refused message with: a request's own,
// null for anything else (a notification or response gets no answer of its
// own under JSON-RPC, but the client should still learn why).
func answerable(e envelope) json.RawMessage {
	if e.Method == nil || len(e.ID) == 0 {
		return nil
	}
	return e.ID
}

func idOf(line []byte) json.RawMessage {
	var e envelope
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	return answerable(e)
}

// reject answers a line kin skipped.
func (s *stream) reject(e *badLine) {
	if s.onBad != nil {
		s.onBad(e)
	}
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(e.msg)
	select {
	case s.rejects <- fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, e.code, msg):
	default: // 64 answers unread: the client is not reading; do not wait for it
		if s.onBad != nil {
			s.onBad(errors.New("dropped the answer to a skipped line: the client is not reading"))
		}
	}
}

// readLine returns the next line without its line end and surrounding
// blank space. A line over MaxLine is discarded as it streams past and
// reported as a *badLine; the last line may end without a newline.
func (s *stream) readLine() ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := s.r.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > MaxLine+2 { // +2: the line end
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(line) > 0 || over):
			// a last line without its newline
		case err != nil:
			return nil, err
		}
		if over {
			return nil, &badLine{rpc.CodeInvalidRequest, fmt.Sprintf("message over the %d-byte limit; skipped", MaxLine), nil}
		}
		return bytes.TrimSpace(line), nil
	}
}
