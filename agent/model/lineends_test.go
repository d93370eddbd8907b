package model

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
)

// TestSSELineEndsAndBOM: whichever line ends a stream uses (CRLF, LF, a bare
// CR, mixed), and with or without a leading byte order mark, the SDK's
// decoder hands on the same events, also when the body comes a byte at a
// time (a CRLF or the BOM cut between reads). A U+FEFF after the start is
// data, kept.
func TestSSELineEndsAndBOM(t *testing.T) {
	want := []string{"{\"a\":1}\n", "{\"b\":\"x\ufeffy\"}\n", "[DONE]\n"}
	bodies := map[string]string{
		"LF":      "data: {\"a\":1}\n\ndata: {\"b\":\"x\ufeffy\"}\n\ndata: [DONE]\n\n",
		"CRLF":    "data: {\"a\":1}\r\n\r\ndata: {\"b\":\"x\ufeffy\"}\r\n\r\ndata: [DONE]\r\n\r\n",
		"CR":      "data: {\"a\":1}\r\rdata: {\"b\":\"x\ufeffy\"}\r\rdata: [DONE]\r\r",
		"mixed":   ": hi\rdata: {\"a\":1}\r\n\rdata: {\"b\":\"x\ufeffy\"}\n\r\ndata: [DONE]\r\n\n",
		"BOM LF":  "\ufeffdata: {\"a\":1}\n\ndata: {\"b\":\"x\ufeffy\"}\n\ndata: [DONE]\n\n",
		"BOM CR":  "\ufeffdata: {\"a\":1}\r\rdata: {\"b\":\"x\ufeffy\"}\r\rdata: [DONE]\r\r",
		"comment": "\ufeff: ping\r\n\r\ndata: {\"a\":1}\r\rdata: {\"b\":\"x\ufeffy\"}\r\rdata: [DONE]\r\r",
	}
	for name, body := range bodies {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(body)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			dec := sseDecoder(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(r)})
			var got []string
			for dec.Next() {
				got = append(got, string(dec.Event().Data))
			}
			if dec.Err() != nil || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%s (one byte a read: %v): events %q (error %v), want %q", name, oneByte, got, dec.Err(), want)
			}
		}
	}
	// Two BOMs: only the first is the stream's; the second starts the
	// first line's field name, which is then no field kin reads.
	dec := sseDecoder(&http.Response{Body: io.NopCloser(strings.NewReader("\ufeff\ufeffdata: {\"a\":1}\n\ndata: {\"b\":2}\n\n"))})
	var got []string
	for dec.Next() {
		got = append(got, string(dec.Event().Data))
	}
	if strings.Join(got, "|") != "{\"b\":2}\n" {
		t.Errorf("two BOMs: events %q, want only the second", got)
	}
	if sseDecoder(nil) != nil {
		t.Error("a failed request has a decoder")
	}
}
