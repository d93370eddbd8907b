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

	"github.com/sourcegraph/jsonrpc2"
)

// MaxFrame is the largest message body kin reads. A larger Content-Length
// is answered with an error and its body skipped, never buffered.
const MaxFrame = 32 << 20

// stream is a jsonrpc2.ObjectStream with LSP framing that survives bad
// input. jsonrpc2's own buffered stream closes the connection on the first
// frame it cannot decode and leaves the rest of that frame in the buffer; an
// editor with a bug would lose its whole session. Here a frame that cannot be
// read is answered with a JSON-RPC error (id null) and skipped, and the next
// frame is read as usual. Writing uses jsonrpc2's VSCodeObjectCodec.
type stream struct {
	rwc io.ReadWriteCloser
	r   *bufio.Reader

	// wmu guards w.
	wmu sync.Mutex
	w   *bufio.Writer

	onBad func(error) // reports a skipped frame to the log
}

func newStream(rwc io.ReadWriteCloser, onBad func(error)) *stream {
	return &stream{rwc: rwc, r: bufio.NewReaderSize(rwc, 64<<10), w: bufio.NewWriter(rwc), onBad: onBad}
}

// WriteObject implements jsonrpc2.ObjectStream.
func (s *stream) WriteObject(obj any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := (jsonrpc2.VSCodeObjectCodec{}).WriteObject(s.w, obj); err != nil {
		return err
	}
	return s.w.Flush()
}

// Close implements jsonrpc2.ObjectStream.
func (s *stream) Close() error { return s.rwc.Close() }

// errFrame is a frame that was skipped; reading goes on.
type errFrame struct {
	code int
	msg  string
}

func (e *errFrame) Error() string { return e.msg }

// ReadObject implements jsonrpc2.ObjectStream. Only a closed or broken
// input ends it.
func (s *stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		var bad *errFrame
		if errors.As(err, &bad) {
			s.reject(bad)
			continue
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, v); err != nil {
			if json.Valid(body) {
				s.reject(&errFrame{CodeInvalidRequest, "invalid request: " + err.Error()})
			} else {
				s.reject(&errFrame{CodeParseError, "parse error: the message body is not valid JSON"})
			}
			continue
		}
		return nil
	}
}

func (s *stream) reject(e *errFrame) {
	if s.onBad != nil {
		s.onBad(e)
	}
	resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":%q}}`, e.code, e.msg)
	_ = s.WriteObject(json.RawMessage(resp))
}

// readFrame reads headers and one body.
func (s *stream) readFrame() ([]byte, error) {
	length := -1
	sawHeader := false
	var headerErr *errFrame
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if err == io.EOF && (sawHeader || line != "") {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			headerErr = &errFrame{CodeInvalidRequest, fmt.Sprintf("bad frame header %q: want \"Name: value\"", clip(line))}
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				headerErr = &errFrame{CodeInvalidRequest, fmt.Sprintf("bad Content-Length %q", clip(value))}
				continue
			}
			length = int(min(n, int64(1<<62)))
		}
	}
	if length < 0 {
		if headerErr == nil {
			headerErr = &errFrame{CodeInvalidRequest, "frame without a Content-Length header"}
		}
		return nil, headerErr
	}
	if length > MaxFrame {
		// Answer first: the body may never come, and the editor should
		// learn why its message went unanswered without waiting for it.
		s.reject(&errFrame{CodeInvalidRequest, fmt.Sprintf("message of %d bytes is over the %d-byte limit; skipped", length, MaxFrame)})
		if _, err := io.CopyN(io.Discard, s.r, int64(length)); err != nil {
			return nil, err
		}
		return s.readFrame()
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		return nil, err
	}
	if headerErr != nil {
		return nil, headerErr
	}
	return bytes.TrimSpace(body), nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
