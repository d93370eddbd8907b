package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxFrame is the largest message body kin reads. A larger frame is
// answered with an error and skipped as it streams past, never buffered.
const MaxFrame = 32 << 20

// maxHeaderLine bounds one header line. LSP headers are a few dozen bytes;
// a longer line is not a header, and is skipped without being buffered.
const maxHeaderLine = 8 << 10

// stream is a jsonrpc2.ObjectStream with LSP framing that survives bad
// input. jsonrpc2's own buffered stream closes the connection on the first
// frame it cannot decode and leaves the rest of that frame in the buffer; an
// editor with a bug would lose its whole session. Here a frame that cannot be
// read is answered with a JSON-RPC error (with the request's id when kin can
// read it, else null) and skipped, and reading goes on where the next frame
// starts (see readFrame).
type stream struct {
	rwc io.ReadWriteCloser
	r   *bufio.Reader
	// resync is set when the next frame's start is unknown: reading skips
	// to the next "Content-Length:" header first.
	resync bool
	// aliased is set once a request id was carried as an alias (wireid.go):
	// only then are written responses checked for one.
	aliased atomic.Bool

	// wmu guards w and broken.
	wmu    sync.Mutex
	w      *bufio.Writer
	broken bool

	onBad  func(error) // reports a skipped frame to the log
	onGone func(error) // the editor stopped reading (a write failed)

	// rejects holds the answers to skipped frames, which a goroutine of
	// their own writes: ReadObject runs on jsonrpc2's read loop, which must
	// never wait on a write (see Server.Handle).
	rejects chan []byte
	closed  chan struct{}
	close1  sync.Once
}

func newStream(rwc io.ReadWriteCloser, onBad, onGone func(error)) *stream {
	s := &stream{rwc: rwc, r: bufio.NewReaderSize(rwc, 64<<10), w: bufio.NewWriter(rwc), onBad: onBad, onGone: onGone,
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

// WriteObject implements jsonrpc2.ObjectStream with the framing of
// jsonrpc2's VSCodeObjectCodec (a Content-Length header, then the JSON).
// The object is encoded before the lock is taken, so a large reply does not
// hold up other writers while it is encoded. A failed write means the
// editor is gone (its end of the pipe is closed, or the socket broke):
// onGone is told once, so that the connection closes and kin tears down as
// for a closed stdin.
func (s *stream) WriteObject(obj any) error {
	data, err := encode(obj)
	if err != nil {
		return err // a value that cannot be encoded: a bug, not a broken pipe
	}
	if s.aliased.Load() {
		data = unaliasID(data)
	}
	s.wmu.Lock()
	if s.broken {
		s.wmu.Unlock()
		return io.ErrClosedPipe
	}
	s.w.WriteString("Content-Length: ")
	s.w.WriteString(strconv.Itoa(len(data)))
	s.w.WriteString("\r\n\r\n")
	s.w.Write(data)
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
// answers to skipped frames) is still checked.
func encode(obj any) ([]byte, error) {
	if _, raw := obj.(json.RawMessage); !raw {
		if m, ok := obj.(json.Marshaler); ok {
			return m.MarshalJSON()
		}
	}
	return json.Marshal(obj)
}

// Close implements jsonrpc2.ObjectStream.
func (s *stream) Close() error {
	s.close1.Do(func() { close(s.closed) })
	return s.rwc.Close()
}

// errFrame is a frame that was skipped; reading goes on.
type errFrame struct {
	code int
	msg  string
	id   json.RawMessage // the request's own id, when it could be read
}

func (e *errFrame) Error() string { return e.msg }

// ReadObject implements jsonrpc2.ObjectStream. Only a closed or broken
// input ends it.
func (s *stream) ReadObject(v any) error {
	for {
		body, id, err := s.readFrame()
		var bad *errFrame
		if errors.As(err, &bad) {
			s.reject(bad)
			continue
		}
		if err != nil {
			return err
		}
		if alias, ok := aliasFor(id); ok {
			if body, err = withID(body, alias); err == nil {
				s.aliased.Store(true)
			}
		}
		if err := json.Unmarshal(body, v); err != nil {
			if json.Valid(body) {
				s.reject(&errFrame{CodeInvalidRequest, "invalid request: " + err.Error(), id})
			} else {
				s.reject(&errFrame{CodeParseError, "parse error: the message body is not valid JSON", id})
			}
			continue
		}
		return nil
	}
}

// reject answers a frame kin skipped, from another goroutine. The id is
// the request's own (as the editor wrote it) or null.
func (s *stream) reject(e *errFrame) {
	if s.onBad != nil {
		s.onBad(e)
	}
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(e.msg)
	resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, e.code, msg)
	select {
	case s.rejects <- resp:
	default: // 64 answers unread: the editor is not reading; do not wait for it
		if s.onBad != nil {
			s.onBad(errors.New("dropped the answer to a skipped frame: the editor is not reading"))
		}
	}
}

// readFrame reads one frame's headers and body, and returns the body and
// the request id read from it (nil when there is none).
//
// Framing kin cannot trust is answered (an *errFrame) and reading starts
// again where the next frame surely starts: a header block without a
// readable Content-Length (no colon, a misspelt name, a negative or
// overflowing value), or with a line over maxHeaderLine, is followed by a
// body of unknown length, so kin skips to the next "Content-Length:"
// header. Bytes before a "Content-Length:" header on its line (the tail of
// a body whose Content-Length was too short) are dropped. A body whose JSON
// value ends before its Content-Length (too long) is answered, and what
// follows it is read as the next frame rather than swallowed.
func (s *stream) readFrame() ([]byte, json.RawMessage, error) {
	if s.resync {
		if err := s.skipToHeader(); err != nil {
			return nil, nil, err
		}
		s.resync = false
	}
	length := int64(-1)
	sawHeader := false
	var problem string // why the headers give no length
	for {
		line, err := s.readHeaderLine()
		if errors.Is(err, errLongLine) {
			s.resync = true
			return nil, nil, &errFrame{code: CodeInvalidRequest, msg: fmt.Sprintf("a frame header line is over %d bytes; skipped to the next Content-Length header", maxHeaderLine)}
		}
		if err != nil {
			if err == io.EOF && (sawHeader || line != "") {
				return nil, nil, io.ErrUnexpectedEOF
			}
			return nil, nil, err
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		if i := indexFold(line, contentLength); i > 0 {
			if s.onBad != nil {
				s.onBad(fmt.Errorf("dropped %d bytes before a frame header: %q", i, clip(line[:i])))
			}
			line, length, problem = line[i:], -1, "" // a frame starts here
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			if problem == "" {
				problem = fmt.Sprintf("bad frame header %q: want \"Name: value\"", clip(line))
			}
			continue
		}
		if !strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			continue // Content-Type, or a header kin does not know
		}
		n, err := parseLength(value)
		if err != nil {
			problem = err.Error()
			continue
		}
		length = n
	}
	if length < 0 {
		if problem == "" {
			problem = "frame without a Content-Length header"
		}
		s.resync = true
		return nil, nil, &errFrame{code: CodeInvalidRequest, msg: problem + "; skipped to the next Content-Length header"}
	}
	return s.readBody(length)
}

// contentLength is where a frame starts; it is searched for in any case.
const contentLength = "content-length:"

// parseLength reads a Content-Length value: decimal digits only, at most
// what an int64 holds.
func parseLength(value string) (int64, error) {
	v := strings.TrimSpace(value)
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad Content-Length %q", clip(v))
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || v == "" {
		return 0, fmt.Errorf("bad Content-Length %q", clip(v))
	}
	return n, nil
}

var errLongLine = errors.New("header line too long")

// readHeaderLine reads one line without its line end. It never holds more
// than the reader's buffer: a longer line is errLongLine, with the rest of
// it left unread.
func (s *stream) readHeaderLine() (string, error) {
	b, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(b) > maxHeaderLine {
		return "", errLongLine
	}
	return strings.TrimRight(string(b), "\r\n"), err
}

// skipToHeader discards input up to the next "Content-Length:" (any
// case), holding no more than the reader's buffer however much it skips.
func (s *stream) skipToHeader() error {
	skipped := 0
	defer func() {
		if skipped > 0 && s.onBad != nil {
			s.onBad(fmt.Errorf("skipped %d bytes to the next frame header", skipped))
		}
	}()
	for {
		if _, err := s.r.Peek(len(contentLength)); err != nil {
			return err
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if i := indexFold(buf, contentLength); i >= 0 {
			skipped += i
			_, _ = s.r.Discard(i)
			return nil
		}
		// Keep a tail that may be the start of the header.
		n := len(buf) - (len(contentLength) - 1)
		skipped += n
		_, _ = s.r.Discard(n)
	}
}

// readBody reads a body of n bytes through a scanner (bodyscan.go), which
// finds the request id and where the JSON value ends: a body over MaxFrame
// is skipped as it streams past and answered with its own id, and a value
// that ends before n bytes, followed by more than blank space, means the
// Content-Length was wrong: it is answered and the rest is the next frame.
func (s *stream) readBody(n int64) ([]byte, json.RawMessage, error) {
	var sc bodyScan
	keep := n <= MaxFrame
	var body []byte
	if keep {
		body = make([]byte, 0, min(n, 64<<10))
	}
	read := int64(0)
	for read < n && !sc.ended() {
		if _, err := s.r.Peek(1); err != nil {
			return nil, nil, unexpectedEOF(err)
		}
		chunk, _ := s.r.Peek(int(min(int64(s.r.Buffered()), n-read)))
		used := sc.feed(chunk)
		if keep {
			body = append(body, chunk[:used]...)
		}
		_, _ = s.r.Discard(used)
		read += int64(used)
	}
	for read < n { // the value ended early: only blank space may follow
		b, err := s.r.Peek(1)
		if err != nil {
			return nil, nil, unexpectedEOF(err)
		}
		if !isSpace(b[0]) {
			return nil, nil, &errFrame{CodeInvalidRequest, fmt.Sprintf("Content-Length %d is more than the message's %d bytes; what follows was read as the next message", n, read), sc.id}
		}
		_, _ = s.r.Discard(1)
		read++
	}
	if !keep {
		return nil, nil, &errFrame{CodeInvalidRequest, fmt.Sprintf("message of %d bytes is over the %d-byte limit; skipped", n, MaxFrame), sc.id}
	}
	return bytes.TrimSpace(body), sc.id, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// indexFold is strings.Index for an ASCII lower-case needle, ignoring the
// case of s.
func indexFold[T ~string | ~[]byte](s T, lower string) int {
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for j < len(lower) && toLower(s[i+j]) == lower[j] {
			j++
		}
		if j == len(lower) {
			return i
		}
	}
	return -1
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
