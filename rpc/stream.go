package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/kin-dev/kin/agent/visible"
)

// MaxFrame is the largest message body kin reads. A larger frame is
// answered with an error and skipped as it streams past, never buffered.
const MaxFrame = 32 << 20

// maxHeaderLine bounds one header line. LSP headers are a few dozen bytes;
// a longer line is not a header, and is skipped without being buffered.
const maxHeaderLine = 8 << 10

// lspFraming is LSP's framing (jsonrpc2's VSCodeObjectCodec: a
// Content-Length header, then the JSON), read so that bad framing is
// answered and skipped rather than ending the session (see readFrame).
type lspFraming struct {
	r *bufio.Reader
	// resync is set when the next frame's start is unknown: reading skips
	// to the next "Content-Length:" header first.
	resync bool
	// aliased is set once a request id was carried as an alias (wireid.go):
	// only then are written responses checked for one.
	aliased atomic.Bool
	onBad   func(error)
	// over is the rest of a frame over MaxFrame that was answered before
	// all of it was read (nil: none); reading skips it first.
	over *overFrame
	// begun is set once the stream's first bytes were looked at (an HTTP
	// request starts with its method: see httpRequest).
	begun bool
}

// overFrame is a frame over MaxFrame being skipped.
type overFrame struct {
	n, read int64 // its Content-Length, and how much of it was read
	sc      bodyScan
}

func newStream(rwc io.ReadWriteCloser, onBad, onGone func(error)) *ObjectStream {
	return NewObjectStream(rwc, func(r *bufio.Reader) Framing { return &lspFraming{r: r, onBad: onBad} }, onBad, onGone, streamingDelta)
}

// streamingDelta recognises kin serve's notifications that carry a piece of
// a stream (turn/delta's and turn/reasoning's text, a running call's
// outputDelta): consecutive pieces of one stream waiting to be written are
// joined into one notification (see ObjectStream). The stream is the
// method and every other param, which must be equal. It runs on every
// notification that has to wait: only one that can carry a piece is
// decoded (deltaField).
func streamingDelta(data []byte) (Delta, bool) {
	field := deltaField(data)
	if field == "" {
		return Delta{}, false
	}
	var m struct {
		Method string                     `json:"method"`
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &m) != nil {
		return Delta{}, false
	}
	var text string
	if raw, ok := m.Params[field]; !ok || json.Unmarshal(raw, &text) != nil || text == "" {
		return Delta{}, false
	}
	rest := make([]string, 0, len(m.Params))
	for k, v := range m.Params {
		if k != field {
			rest = append(rest, k+"="+string(v))
		}
	}
	slices.Sort(rest)
	join := func(text string) []byte { return joinDelta(m.Method, m.Params, field, text) }
	return Delta{Stream: m.Method + "\x00" + strings.Join(rest, "\x00"), Text: text, Join: join}, true
}

// deltaMethods are how the notifications that may carry a piece of a
// stream start (jsonrpc2 encodes a notification's members in this order),
// and the param that holds the piece.
var deltaMethods = []struct {
	start []byte
	field string
}{
	{[]byte(`{"jsonrpc":"2.0","method":"` + NotifyTurnDelta + `","params":`), "text"},
	{[]byte(`{"jsonrpc":"2.0","method":"` + NotifyTurnReasoning + `","params":`), "text"},
	{[]byte(`{"jsonrpc":"2.0","method":"` + NotifyTurnToolCall + `","params":`), "outputDelta"},
}

// outputDeltaKey is how a call's outputDelta param is encoded (a quote
// right before a key is never inside a JSON string, where it is escaped).
var outputDeltaKey = []byte(`"outputDelta":`)

// deltaField is the param that holds the piece in a notification that may
// carry one, read from how it starts, else "". A call's notification
// without an outputDelta (its first and last, with its arguments and
// output) is looked through for the key, not decoded.
func deltaField(data []byte) string {
	for _, m := range deltaMethods {
		if !bytes.HasPrefix(data, m.start) {
			continue
		}
		if m.field == "outputDelta" && !bytes.Contains(data[len(m.start):], outputDeltaKey) {
			return ""
		}
		return m.field
	}
	return ""
}

// joinDelta is a delta notification with params, its text field holding
// text.
func joinDelta(method string, params map[string]json.RawMessage, field, text string) []byte {
	joined := make(map[string]json.RawMessage, len(params))
	for k, v := range params {
		joined[k] = v
	}
	joined[field], _ = json.Marshal(text)
	b, _ := json.Marshal(struct {
		JSONRPC string                     `json:"jsonrpc"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}{"2.0", method, joined})
	return b
}

// Frame implements Framing.
func (s *lspFraming) Frame(w *bufio.Writer, data []byte) {
	if s.aliased.Load() {
		data = unaliasID(data)
	}
	w.WriteString("Content-Length: ")
	w.WriteString(strconv.Itoa(len(data)))
	w.WriteString("\r\n\r\n")
	w.Write(data)
}

// Next implements Framing: one frame, with a request id jsonrpc2 would
// change carried as an alias (wireid.go).
func (s *lspFraming) Next() ([]byte, json.RawMessage, error) {
	body, id, err := s.readFrame()
	if err != nil {
		return nil, nil, err
	}
	if aliased, ok := AliasID(body, id); ok {
		body = aliased
		s.aliased.Store(true)
	}
	return body, id, nil
}

// readFrame reads one frame's headers and body, and returns the body and
// the request id read from it (nil when there is none).
//
// Framing kin cannot trust is answered (a *Skipped) and reading starts
// again where the next frame surely starts: a header block without a
// readable Content-Length (no colon, a misspelt name, a negative or
// overflowing value), or with a line over maxHeaderLine, is followed by a
// body of unknown length, so kin skips to the next "Content-Length:"
// header. Bytes before a "Content-Length:" header on its line (the tail of
// a body whose Content-Length was too short) are dropped. A body whose JSON
// value ends before its Content-Length (too long) is answered, and what
// follows it is read as the next frame rather than swallowed.
func (s *lspFraming) readFrame() ([]byte, json.RawMessage, error) {
	if !s.begun {
		// A browser's request starts the connection with its method; a
		// request line too long to read as a header would otherwise be
		// skipped, with the headers after it, to the Content-Length.
		s.begun = true
		if b, _ := s.r.Peek(len("OPTIONS ")); httpMethod(b) {
			if s.onBad != nil {
				s.onBad(fmt.Errorf("%w: %q", errHTTPRequest, b))
			}
			return nil, nil, errHTTPRequest
		}
	}
	if s.over != nil {
		if err := s.skipOver(false); err != nil {
			return nil, nil, err
		}
	}
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
			return nil, nil, &Skipped{Code: CodeInvalidRequest, Msg: fmt.Sprintf("a frame header line is over %d bytes; skipped to the next Content-Length header", maxHeaderLine)}
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
		if httpRequest(line) {
			if s.onBad != nil {
				s.onBad(fmt.Errorf("%w: %q", errHTTPRequest, visible.Cut(line, 60)))
			}
			return nil, nil, errHTTPRequest
		}
		if i := indexFold(line, contentLength); i > 0 {
			// Only the count: these bytes are the end of the body before
			// (its Content-Length too short, as an editor that counts
			// characters makes it), the last thing it wrote, such as an
			// mcp/add's env; the log is no place for them.
			if s.onBad != nil {
				s.onBad(fmt.Errorf("dropped %d bytes before a frame header", i))
			}
			line, length, problem = line[i:], -1, "" // a frame starts here
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			if problem == "" {
				problem = fmt.Sprintf("bad frame header %q: want \"Name: value\"", visible.Cut(line, 40))
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
		return nil, nil, &Skipped{Code: CodeInvalidRequest, Msg: problem + "; skipped to the next Content-Length header"}
	}
	return s.readBody(length)
}

// contentLength is where a frame starts; it is searched for in any case.
const contentLength = "content-length:"

// parseLength reads a Content-Length value: decimal digits only, at most
// what an int64 holds.
func parseLength(value string) (int64, error) {
	v := strings.TrimSpace(value)
	n, ok := decimal(v)
	if !ok {
		return 0, fmt.Errorf("bad Content-Length %q", visible.Cut(v, 40))
	}
	return n, nil
}

// decimal reads s when it is decimal digits only (no sign, no blank) that
// fit an int64: a Content-Length, or a request id jsonrpc2 keeps as it is.
func decimal(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

var errLongLine = errors.New("header line too long")

// readHeaderLine reads one line without its line end. It never holds more
// than the reader's buffer: a longer line is errLongLine, with the rest of
// it left unread.
func (s *lspFraming) readHeaderLine() (string, error) {
	b, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(b) > maxHeaderLine {
		return "", errLongLine
	}
	return strings.TrimRight(string(b), "\r\n"), err
}

// skipToHeader discards input up to the next "Content-Length:" (any
// case), holding no more than the reader's buffer however much it skips.
func (s *lspFraming) skipToHeader() error {
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
// is skipped (see skipOver), a value that ends before n bytes, followed by
// more than blank space, means the Content-Length was wrong: it is
// answered and the rest is the next frame; and a request whose id is null
// is refused.
func (s *lspFraming) readBody(n int64) ([]byte, json.RawMessage, error) {
	if n > MaxFrame {
		s.over = &overFrame{n: n}
		return nil, nil, s.skipOver(true)
	}
	sc := bodyScan{whole: true}
	body := make([]byte, 0, min(n, 64<<10))
	read := int64(0)
	for read < n && !sc.ended() {
		if _, err := s.r.Peek(1); err != nil {
			return nil, nil, unexpectedEOF(err)
		}
		chunk, _ := s.r.Peek(int(min(int64(s.r.Buffered()), n-read)))
		used := sc.feed(chunk)
		body = append(body, chunk[:used]...)
		_, _ = s.r.Discard(used)
		read += int64(used)
	}
	for read < n { // the value ended early: only blank space may follow
		b, err := s.r.Peek(1)
		if err != nil {
			return nil, nil, unexpectedEOF(err)
		}
		if !isSpace(b[0]) {
			return nil, nil, &Skipped{CodeInvalidRequest, fmt.Sprintf("Content-Length %d is more than the message's %d bytes; what follows was read as the next message", n, read), sc.requestID()}
		}
		_, _ = s.r.Discard(1)
		read++
	}
	if sc.nullIDRequest() {
		return nil, nil, NullIDRequest()
	}
	return bytes.TrimSpace(body), sc.requestID(), nil
}

// skipOver reads on through a frame over MaxFrame (s.over), keeping none of
// it. With answer set it returns the frame's *Skipped as soon as it knows
// what to answer with, never waiting for bytes it does not need: a
// request's id was read (its id and its "method": an answer to one of
// kin's own requests has an id from kin's numbering, and is refused with
// null like any other kin cannot read), the JSON value ended (a
// Content-Length of 10 GB on a small request is answered at once, with the
// request's id), or the body is not an object. The rest is skipped at the start of the next read: up to its
// Content-Length as it streams past, and only blank space after its value
// ended, else what follows is the next frame (the length was wrong); a
// body that is not JSON has no end kin can find, and reading skips to the
// next Content-Length header.
func (s *lspFraming) skipOver(answer bool) error {
	o := s.over
	skipped := func() error {
		return &Skipped{CodeInvalidRequest, fmt.Sprintf("message of %d bytes is over the %d-byte limit; skipped", o.n, MaxFrame), o.sc.requestID()}
	}
	for o.read < o.n && !o.sc.ended() {
		if o.sc.opaque {
			// Not JSON: where it ends is unknown, so the next frame is
			// looked for as after a header without a length.
			s.over, s.resync = nil, true
			if answer {
				return skipped()
			}
			return nil
		}
		if answer && o.sc.requestID() != nil {
			return skipped()
		}
		if _, err := s.r.Peek(1); err != nil {
			return unexpectedEOF(err)
		}
		chunk, _ := s.r.Peek(int(min(int64(s.r.Buffered()), o.n-o.read)))
		used := o.sc.feed(chunk)
		_, _ = s.r.Discard(used)
		o.read += int64(used)
	}
	if answer {
		return skipped()
	}
	for o.read < o.n {
		b, err := s.r.Peek(1)
		if err != nil {
			return unexpectedEOF(err)
		}
		if !isSpace(b[0]) {
			if s.onBad != nil {
				s.onBad(fmt.Errorf("a message's Content-Length %d was more than its %d bytes; what follows was read as the next message", o.n, o.read))
			}
			break
		}
		_, _ = s.r.Discard(1)
		o.read++
	}
	s.over = nil
	return nil
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
