package connect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kin-dev/kin/agent/visible"
)

// Bounds on what a stdio server may write on stdout that is not a message,
// counted since its last message. Past either, the connection fails: a
// server that writes only noise never connects, however long it talks.
const (
	maxNoiseLines = 1000
	maxNoiseBytes = MaxMessage
)

// noiseFilter is a stdio server's stdout as the SDK reads it: one JSON-RPC
// message per line, passed through as it is, with every other line skipped
// and reported (a banner such as "Starting Time MCP server...", a log line
// written to the wrong stream, a blank line). The TypeScript SDK's client
// does the same; go-sdk's IOTransport would drop the connection on the
// first such line. A line longer than MaxMessage ends the stream with an
// error, as the SDK's own limit would.
type noiseFilter struct {
	r      *bufio.Reader
	closer io.Closer
	noise  func(line []byte) // called for each skipped line (not blank ones)
	order  *PropertyOrder    // sees each message line (nil: none)
	sent   *methods          // the methods of kin's requests, for checkReply
	// redact removes the server's secrets from a line quoted in an error,
	// before it is cut (a cut secret no longer matches); nil: none.
	redact func(string) string

	pending []byte // the rest of the current message line
	lines   int    // noise since the last message
	bytes   int
	err     error
}

func newNoiseFilter(rc io.ReadCloser, noise func([]byte)) *noiseFilter {
	return &noiseFilter{r: bufio.NewReaderSize(rc, 64<<10), closer: rc, noise: noise}
}

// Read implements io.Reader.
func (f *noiseFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.line()
		if err != nil {
			f.err = err
		}
		if len(line) == 0 {
			continue
		}
		if isMessage(line) {
			f.order.observe(line)
			line = checkReply(line, "", f.sent, f.order)
			f.pending, f.lines, f.bytes = line, 0, 0
			break
		}
		f.lines++
		f.bytes += len(line)
		if len(bytes.TrimSpace(line)) > 0 && f.noise != nil {
			f.noise(line)
		}
		if f.lines > maxNoiseLines || f.bytes > maxNoiseBytes {
			last := string(bytes.TrimSpace(line))
			if f.redact != nil {
				last = f.redact(last)
			}
			f.err = fmt.Errorf("the server wrote %d lines (%d bytes) on stdout that are not JSON-RPC messages, the last %q",
				f.lines, f.bytes, visible.Cut(last, 80))
			f.pending = nil
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// line reads one line, its newline included, of at most MaxMessage bytes.
func (f *noiseFilter) line() ([]byte, error) {
	var out []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > MaxMessage {
			return nil, fmt.Errorf("the server wrote a line of more than %d bytes on stdout", MaxMessage)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}

// Close implements io.Closer.
func (f *noiseFilter) Close() error { return f.closer.Close() }

// isMessage reports whether a line holds one JSON-RPC message (an object
// with a "jsonrpc" member) or a batch (an array). Anything else, JSON or
// not, is noise.
func isMessage(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	switch line[0] {
	case '[':
		return json.Valid(line)
	case '{':
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":`)) {
			return json.Valid(line) // how the SDKs write a message: the cheap check
		}
		var m struct { // Unmarshal checks the whole line is valid JSON too
			JSONRPC json.RawMessage `json:"jsonrpc"`
		}
		return json.Unmarshal(line, &m) == nil && m.JSONRPC != nil
	}
	return false
}
