package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// ObjectStream is a jsonrpc2.ObjectStream that survives bad input, shared
// by kin's two framings (LSP headers for kin serve, one message per line for
// kin acp). jsonrpc2's own streams close the connection on the first message
// they cannot decode; a peer with a bug would lose its whole session. Here a
// message that cannot be read is answered with a JSON-RPC error (with the
// request's id when it can be read, else null) and skipped, and reading goes
// on with the next message. The Framing cuts messages from the input and
// frames them on the output; everything else (the outbox, backpressure, a
// broken output, the answers to skipped messages) is here, once.
//
// Backpressure. Nothing kin sends waits for the peer to read it: messages go
// to an outbox that a goroutine of its own writes, in order. What the outbox
// may hold is bounded from the other side: while MaxUnanswered requests are
// read but not yet answered, or MaxQueued bytes wait to be written, kin
// reads nothing more, so a peer that sends without reading stops being read
// (its pipe fills, its writes wait) until it catches up, and every request
// is answered once it does; nothing is dropped. Notifications kin makes on
// its own (a turn streaming) never wait: consecutive streaming deltas of
// the same stream (NewObjectStream's merge) waiting in the outbox are
// joined into one, so a turn runs to its end while the peer does not read,
// holding no more than its own text, and the peer reads it all, in order,
// when it reads again. A peer that closes its end ends everything at once (onGone).
type ObjectStream struct {
	rwc     io.ReadWriteCloser
	framing Framing
	merge   func(data []byte) (Delta, bool)

	// mu guards everything below; more is signalled when the outbox or the
	// count of unanswered requests shrinks, or the stream ends.
	mu         sync.Mutex
	more       *sync.Cond
	out        []*outItem
	queued     int // bytes in out
	unanswered int // requests read that kin has not answered yet
	broken     bool
	closing    bool
	wake       chan struct{} // a message for the writer (capacity 1)
	drained    chan struct{} // closed when the writer has finished

	onBad  func(error) // reports a skipped message to the log
	onGone func(error) // the peer stopped reading (a write failed)

	close1 sync.Once
}

// Backpressure bounds (see ObjectStream).
const (
	// MaxUnanswered is how many requests kin reads ahead of its answers.
	MaxUnanswered = 256
	// MaxQueued is how many bytes may wait to be written before kin stops
	// reading.
	MaxQueued = 16 << 20
	// closeDrain bounds how long closing waits for the outbox to be
	// written (a peer that asked kin to exit reads the last answers).
	closeDrain = 2 * time.Second
)

// outItem is one message in the outbox: its bytes, or a streaming delta
// that later pieces of the same stream may still join.
type outItem struct {
	data  []byte
	delta *joined
}

// joined is consecutive streaming deltas of one stream, joined: the first
// notification with its text holding every piece.
type joined struct {
	key    Delta
	first  []byte // the first as encoded: written as is when nothing joined it
	pieces int
	text   strings.Builder
}

// Delta is what a stream's merge func (see NewObjectStream) makes of a
// notification that carries a piece of streamed text.
type Delta struct {
	// Stream says which stream the piece belongs to: the notification
	// but its text (method and every other param). Only pieces of one
	// Stream are joined.
	Stream string
	// Text is this piece.
	Text string
	// Join is the first notification with its text replaced by text
	// (every piece joined, in order).
	Join func(text string) []byte
	// Replace says the notification replaces what the one before it of
	// its stream said (a tool call's content): a waiting one is dropped
	// for it, and Text and Join are not used.
	Replace bool
}

// Framing is how one wire format cuts messages from its input and writes
// them.
type Framing interface {
	// Next reads one message and returns its body and the request id read
	// from it (nil when there is none). A *Skipped error is answered and
	// reading goes on; any other error ends the stream.
	Next() (body []byte, id json.RawMessage, err error)
	// Frame writes one encoded message to w (from the outbox's writer).
	Frame(w *bufio.Writer, data []byte)
}

// Skipped is a message the framing could not read; it is answered with
// this error and reading goes on.
type Skipped struct {
	Code int
	Msg  string
	ID   json.RawMessage // the request's own id, when it could be read
}

func (e *Skipped) Error() string { return e.Msg }

// NullIDRequest is a framing's refusal of a request whose id is null:
// jsonrpc2 takes it for a notification, so kin would run it and the peer
// wait for its answer forever. It is answered with id null, as JSON-RPC
// answers a request whose id cannot be used.
func NullIDRequest() *Skipped {
	return &Skipped{Code: CodeInvalidRequest, Msg: "invalid request: a request's id is a string or a number, not null (a notification has no id)"}
}

// NewObjectStream reads and writes rwc through the framing that newFraming
// makes over rwc's buffered reader. onBad (may be nil) hears of every
// skipped message; onGone (may be nil) is told once when a write fails.
// merge (may be nil) recognises a streaming delta: consecutive deltas of
// one stream waiting to be written are joined (see ObjectStream). Build
// the connection with the stream's NewConn: only it counts the requests in
// flight (MaxUnanswered).
func NewObjectStream(rwc io.ReadWriteCloser, newFraming func(*bufio.Reader) Framing, onBad, onGone func(error), merge func(data []byte) (Delta, bool)) *ObjectStream {
	s := &ObjectStream{rwc: rwc, framing: newFraming(bufio.NewReaderSize(rwc, 64<<10)), merge: merge,
		onBad: onBad, onGone: onGone, wake: make(chan struct{}, 1), drained: make(chan struct{})}
	s.more = sync.NewCond(&s.mu)
	go s.write(bufio.NewWriterSize(rwc, 64<<10))
	return s
}

// WriteObject implements jsonrpc2.ObjectStream: the message goes to the
// outbox, and WriteObject returns without waiting for the peer. It fails
// only once the peer is gone (a write failed: onGone was told) or the
// stream is closed.
func (s *ObjectStream) WriteObject(obj any) error {
	data, err := encode(obj)
	if err != nil {
		return err // a value that cannot be encoded: a bug, not a broken pipe
	}
	return s.enqueue(data)
}

func (s *ObjectStream) enqueue(data []byte) error {
	// Only a message that has to wait (the outbox is not empty) may be
	// joined by the next: one written at once is not looked at.
	var key Delta
	mergeable := false
	if s.merge != nil && s.waiting() {
		key, mergeable = s.merge(data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken || s.closing {
		return io.ErrClosedPipe
	}
	if mergeable && len(s.out) > 1 { // out[0] may be being written
		last := s.out[len(s.out)-1]
		if tail := last.delta; tail != nil && tail.key.Stream == key.Stream && tail.key.Replace == key.Replace {
			if key.Replace {
				s.queued += len(data) - last.size()
				s.out[len(s.out)-1] = &outItem{data: data, delta: &joined{key: key, first: data, pieces: 1}}
				return nil
			}
			tail.pieces++
			tail.text.WriteString(key.Text)
			s.queued += len(key.Text)
			return nil
		}
	}
	it := &outItem{data: data}
	if mergeable {
		it.delta = &joined{key: key, first: data, pieces: 1}
		if !key.Replace {
			it.delta.text.WriteString(key.Text)
		}
	}
	s.out = append(s.out, it)
	s.queued += len(data)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

func (s *ObjectStream) waiting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.out) > 0
}

// size is what an outbox item counts in queued: its bytes and the text
// joined to them.
func (it *outItem) size() int {
	n := len(it.data)
	if it.delta != nil && !it.delta.key.Replace {
		n += it.delta.text.Len() - len(it.delta.key.Text)
	}
	return n
}

// bytes are what an outbox item writes.
func (it *outItem) bytes() []byte {
	d := it.delta
	if d == nil || d.pieces == 1 {
		return it.data
	}
	if b := d.key.Join(d.text.String()); b != nil {
		return b
	}
	return it.data
}

// write is the outbox's writer: it writes messages in order, flushing when
// the outbox is empty, until the stream closes or a write fails.
func (s *ObjectStream) write(w *bufio.Writer) {
	defer close(s.drained)
	for {
		s.mu.Lock()
		for len(s.out) == 0 && !s.closing {
			s.mu.Unlock()
			<-s.wake
			s.mu.Lock()
		}
		if len(s.out) == 0 { // closing, and all written
			s.mu.Unlock()
			return
		}
		it := s.out[0]
		s.mu.Unlock()

		data := it.bytes()
		s.framing.Frame(w, data)
		var err error
		if w.Buffered() > 32<<10 || s.emptyAfter(it) {
			err = w.Flush()
		}

		s.mu.Lock()
		s.out = s.out[1:]
		s.queued -= it.size()
		if err != nil {
			s.broken = true
			s.out, s.queued = nil, 0
		}
		s.more.Broadcast()
		s.mu.Unlock()
		if err != nil {
			if s.onGone != nil {
				s.onGone(err)
			}
			return
		}
	}
}

// emptyAfter reports whether it is the last message waiting: then what is
// buffered is flushed.
func (s *ObjectStream) emptyAfter(it *outItem) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.out) == 1 && s.out[0] == it
}

// encode is obj's JSON. jsonrpc2 hands WriteObject each message as a
// json.Marshaler whose output is json.Marshal's own (compact, valid,
// HTML-escaped); json.Marshal(obj) would check and compact it all over
// again, a tenth of kin's CPU per streamed delta. A json.RawMessage (the
// answers to skipped messages) is still checked.
func encode(obj any) ([]byte, error) {
	if _, raw := obj.(json.RawMessage); !raw {
		if m, ok := obj.(json.Marshaler); ok {
			return m.MarshalJSON()
		}
	}
	return json.Marshal(obj)
}

// Close implements jsonrpc2.ObjectStream. What waits in the outbox is
// written first, for at most closeDrain (a peer that asked kin to exit
// reads its last answers; one that stopped reading holds nothing up).
func (s *ObjectStream) Close() error {
	s.close1.Do(func() {
		s.mu.Lock()
		s.closing = true
		s.more.Broadcast()
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
		select {
		case <-s.drained:
		case <-time.After(closeDrain):
		}
	})
	return s.rwc.Close()
}

// InputEnded is what onBad hears when the input ends for a reason other
// than its close (an HTTP request on kin's connection, a broken read).
type InputEnded struct{ Err error }

func (e *InputEnded) Error() string { return "the connection ended: " + e.Err.Error() }
func (e *InputEnded) Unwrap() error { return e.Err }

// BadInput is the log message for what onBad heard: skipped (what a
// skipped message is called on the wire: a frame, a line), or the end.
func BadInput(err error, skipped string) string {
	var ended *InputEnded
	if errors.As(err, &ended) {
		return "the connection ended"
	}
	return skipped
}

// closedInput reports whether err is the input's close: the peer's, or
// kin's own end closed under the read (a write to a vanished peer).
func closedInput(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrClosed)
}

// ReadObject implements jsonrpc2.ObjectStream. Only a closed or broken
// input ends it. It waits first while the peer is not reading what kin
// sends (see ObjectStream: backpressure).
func (s *ObjectStream) ReadObject(v any) error {
	for {
		// Before every message, a skipped one too: its answer waits in the
		// outbox like any other, and a peer that sends frames kin cannot
		// read without reading the answers is not read on without bound.
		s.awaitRoom()
		body, id, err := s.framing.Next()
		var bad *Skipped
		if errors.As(err, &bad) {
			s.reject(bad)
			continue
		}
		if err != nil {
			// jsonrpc2 logs a read error other than EOF after it has
			// announced the disconnect, when Serve may have returned and
			// its logger be gone (a test's): the reason is told here, while
			// the connection still stands, and jsonrpc2 hears EOF.
			if !closedInput(err) && s.onBad != nil {
				s.onBad(&InputEnded{err})
			}
			return io.EOF
		}
		// Each message into a zero value: jsonrpc2 fills in a request's
		// method and params before it finds its id unreadable, and a
		// skipped request left in v would be taken, with the next
		// message (a response), for a new one and run.
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
			rv.Elem().SetZero()
		}
		if err := json.Unmarshal(body, v); err != nil {
			if json.Valid(body) {
				s.reject(&Skipped{CodeInvalidRequest, "invalid request: " + err.Error(), id})
			} else {
				s.reject(&Skipped{CodeParseError, "parse error: the message body is not valid JSON", id})
			}
			continue
		}
		return nil // a request is counted as jsonrpc2 hands it on (NewConn)
	}
}

// NewConn is jsonrpc2.NewConn over the stream, with the count of requests
// in flight (see ObjectStream: backpressure) kept from what jsonrpc2
// decodes: a request is counted as the library hands it to h, and its
// answer as the library sends it. The count is never kin's own reading of
// the body: the library reads member names as encoding/json does (an
// escaped "\u0069d" is "id", the last of a repeated member wins, a
// "METHOD":null can make a request a response), and a count that disagreed
// with it was lowered by answers to requests it never counted (a peer
// could then have any number in flight) or raised by messages jsonrpc2
// does not answer (kin stopped reading for good).
func (s *ObjectStream) NewConn(ctx context.Context, h jsonrpc2.Handler, opts ...jsonrpc2.ConnOpt) *jsonrpc2.Conn {
	count := func(delta int) {
		s.mu.Lock()
		s.unanswered += delta
		s.more.Broadcast()
		s.mu.Unlock()
	}
	opts = append([]jsonrpc2.ConnOpt{
		// On the read loop, before h and before the next ReadObject. An
		// answer to one of kin's own requests comes with that request.
		jsonrpc2.OnRecv(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
			if resp == nil && req != nil && !req.Notif {
				count(1)
			}
		}),
		jsonrpc2.OnSend(func(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
			if req == nil && resp != nil { // an answer; one of kin's own requests comes with req
				count(-1)
			}
		}),
	}, opts...)
	return jsonrpc2.NewConn(ctx, s, h, opts...)
}

// awaitRoom returns once kin may read on: fewer than MaxUnanswered
// requests unanswered and less than MaxQueued bytes waiting to be written,
// or the stream is ending.
func (s *ObjectStream) awaitRoom() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for (s.unanswered >= MaxUnanswered || s.queued >= MaxQueued) && !s.broken && !s.closing {
		s.more.Wait()
	}
}

// AwaitWritten returns once everything sent so far is written (or the
// stream ended).
func (s *ObjectStream) AwaitWritten() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.out) > 0 && !s.broken {
		s.more.Wait()
	}
}

// Pressure is what waits on the peer: requests read and not yet answered,
// and bytes not yet written.
func (s *ObjectStream) Pressure() (unanswered, queued int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unanswered, s.queued
}

// reject answers a message kin skipped. The id is the request's own (as the
// peer wrote it) or null.
func (s *ObjectStream) reject(e *Skipped) {
	if s.onBad != nil {
		s.onBad(e)
	}
	id := e.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(e.Msg)
	resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, e.Code, msg)
	_ = s.WriteObject(json.RawMessage(resp))
}
