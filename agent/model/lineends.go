package model

import (
	"bufio"
	"bytes"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// sseDecoder is openai-go's SSE decoder for a streamed response (nil: the
// request failed), reading the body through sseText and handing joined
// events on one by one (splitJoined).
func sseDecoder(raw *http.Response) ssestream.Decoder {
	if raw != nil && raw.Body != nil {
		raw.Body = sseText(raw.Body)
	}
	return splitJoined(ssestream.NewDecoder(raw))
}

// utf8BOM is U+FEFF in UTF-8.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// lineEnds is a stream body as openai-go's SSE decoder reads it: without a
// leading byte order mark, and every line ended by LF. The event stream
// format ends a line with CRLF, LF or a bare CR, and strips one leading
// U+FEFF (the WHATWG HTML specification, "Parsing an event stream"); the
// SDK's decoder splits lines at LF alone (bufio.ScanLines) and reads a BOM
// as part of the first field's name. A stream whose lines end with CR was
// one line that never ended: the answer failed as "an event that is not
// valid JSON", or at its end with nothing in it; a BOM cost the first
// event (a one-chunk answer, all of it). Only line ends change here: the
// SSE framing stays the SDK's.
type lineEnds struct {
	r *bufio.Reader
	c io.Closer
	// started: the leading BOM was looked for; afterCR: the last byte
	// read was a CR, so an LF that comes next ends the same line.
	started, afterCR bool
}

func sseText(body io.ReadCloser) io.ReadCloser {
	return &lineEnds{r: bufio.NewReader(body), c: body}
}

func (l *lineEnds) Read(p []byte) (int, error) {
	if !l.started {
		l.started = true
		// Peek waits for the three bytes (or the end), however the body
		// is cut into reads.
		if head, _ := l.r.Peek(len(utf8BOM)); bytes.Equal(head, utf8BOM) {
			_, _ = l.r.Discard(len(utf8BOM))
		}
	}
	for {
		n, err := l.r.Read(p)
		if !l.afterCR && bytes.IndexByte(p[:n], '\r') < 0 {
			return n, err // LF line ends, as most servers send: nothing to change
		}
		out := 0
		for _, b := range p[:n] {
			switch {
			case b == '\n' && l.afterCR: // CRLF: its LF was written for the CR
				l.afterCR = false
				continue
			case b == '\r':
				b, l.afterCR = '\n', true
			default:
				l.afterCR = false
			}
			p[out] = b
			out++
		}
		// A read that was only the LF of a CRLF gives nothing: read on
		// rather than answer 0 bytes and no error.
		if out > 0 || err != nil || n == 0 {
			return out, err
		}
	}
}

func (l *lineEnds) Close() error { return l.c.Close() }
