package rpc

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ObjectStream is a jsonrpc2.ObjectStream that survives bad input, shared
// by kin's two framings (LSP headers for kin serve, one message per line for
// kin acp). jsonrpc2's own streams close the connection on the first message
// they cannot decode; a peer with a bug would lose its whole session. Here a
// message that cannot be read is answered with a JSON-RPC error (with the
// request's id when it can be read, else null) and skipped, and reading goes
// on with the next message. The Framing cuts messages from the input and
// frames them on the output; everything else (the write lock, a broken
// output, the answers to skipped messages) is here, once.
type ObjectStream struct {
	rwc     io.ReadWriteCloser
	framing Framing

	// wmu guards w and broken.
	wmu    sync.Mutex
	w      *bufio.Writer
	broken bool

	onBad  func(error) // reports a skipped message to the log
	onGone func(error) // the peer stopped reading (a write failed)

	// rejects holds the answers to skipped messages, which a goroutine of
	// their own writes: ReadObject runs on jsonrpc2's read loop, which must
	// never wait on a write (see Server.Handle).
	rejects chan []byte
	closed  chan struct{}
	close1  sync.Once
}

// Framing is how one wire format cuts messages from its input and writes
// them.
type Framing interface {
	// Next reads one message and returns its body and the request id read
	// from it (nil when there is none). A *Skipped error is answered and
	// reading goes on; any other error ends the stream.
	Next() (body []byte, id json.RawMessage, err error)
	// Frame writes one encoded message to w (under the stream's write lock).
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

// NewObjectStream reads and writes rwc through the framing that newFraming
// makes over rwc's buffered reader. onBad (may be nil) hears of every
// skipped message; onGone (may be nil) is told once when a write fails.
func NewObjectStream(rwc io.ReadWriteCloser, newFraming func(*bufio.Reader) Framing, onBad, onGone func(error)) *ObjectStream {
	s := &ObjectStream{rwc: rwc, framing: newFraming(bufio.NewReaderSize(rwc, 64<<10)), w: bufio.NewWriterSize(rwc, 64<<10),
		onBad: onBad, onGone: onGone, rejects: make(chan []byte, 64), closed: make(chan struct{})}
	go s.writeRejects()
	return s
}

func (s *ObjectStream) writeRejects() {
	for {
		select {
		case b := <-s.rejects:
			_ = s.WriteObject(json.RawMessage(b))
		case <-s.closed:
			return
		}
	}
}

// WriteObject implements jsonrpc2.ObjectStream. The object is encoded
// before the lock is taken, so a large reply does not hold up other writers
// while it is encoded. A failed write means the peer is gone (its end of the
// pipe is closed, or the socket broke): onGone is told once, so that the
// connection closes and kin tears down as for a closed input.
func (s *ObjectStream) WriteObject(obj any) error {
	data, err := encode(obj)
	if err != nil {
		return err // a value that cannot be encoded: a bug, not a broken pipe
	}
	s.wmu.Lock()
	if s.broken {
		s.wmu.Unlock()
		return io.ErrClosedPipe
	}
	s.framing.Frame(s.w, data)
	err = s.w.Flush()
	s.broken = err != nil
	s.wmu.Unlock()
	if err != nil && s.onGone != nil {
		s.onGone(err)
	}
	return err
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

// Close implements jsonrpc2.ObjectStream.
func (s *ObjectStream) Close() error {
	s.close1.Do(func() { close(s.closed) })
	return s.rwc.Close()
}

// ReadObject implements jsonrpc2.ObjectStream. Only a closed or broken
// input ends it.
func (s *ObjectStream) ReadObject(v any) error {
	for {
		body, id, err := s.framing.Next()
		var bad *Skipped
		if errors.As(err, &bad) {
			s.reject(bad)
			continue
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, v); err != nil {
			if json.Valid(body) {
				s.reject(&Skipped{CodeInvalidRequest, "invalid request: " + err.Error(), id})
			} else {
				s.reject(&Skipped{CodeParseError, "parse error: the message body is not valid JSON", id})
			}
			continue
		}
		return nil
	}
}

// reject answers a message kin skipped, from another goroutine. The id is
// the request's own (as the peer wrote it) or null.
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
	select {
	case s.rejects <- resp:
	default: // 64 answers unread: the peer is not reading; do not wait for it
		if s.onBad != nil {
			s.onBad(errors.New("dropped the answer to a skipped message: the peer is not reading"))
		}
	}
}
