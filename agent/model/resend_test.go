package model

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// h2Resetter is an HTTP/2 service (cleartext, prior knowledge) that takes
// each request whole and then resets its stream with PROTOCOL_ERROR: a
// broken service, or a proxy in front of one, after the request arrived.
// It counts the requests that arrived whole.
type h2Resetter struct {
	ln      net.Listener
	arrived atomic.Int32
}

func newH2Resetter(t *testing.T) *h2Resetter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &h2Resetter{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *h2Resetter) serve(c net.Conn) {
	defer c.Close()
	preface := make([]byte, 24)
	if _, err := io.ReadFull(c, preface); err != nil {
		return
	}
	frame := func(typ, flags byte, stream uint32, payload []byte) {
		h := make([]byte, 9)
		h[0], h[1], h[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
		h[3], h[4] = typ, flags
		binary.BigEndian.PutUint32(h[5:], stream)
		_, _ = c.Write(append(h, payload...))
	}
	frame(0x4, 0, 0, nil) // SETTINGS
	for {
		h := make([]byte, 9)
		if _, err := io.ReadFull(c, h); err != nil {
			return
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, stream := h[3], h[4], binary.BigEndian.Uint32(h[5:])&0x7fffffff
		if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
			return
		}
		switch {
		case typ == 0x4 && flags&0x1 == 0: // the client's SETTINGS
			frame(0x4, 0x1, 0, nil)
		case typ == 0x6 && flags&0x1 == 0: // PING
			frame(0x6, 0x1, 0, make([]byte, 8))
		case (typ == 0x0 || typ == 0x1) && flags&0x1 != 0: // the request's end
			s.arrived.Add(1)
			frame(0x3, 0, stream, []byte{0, 0, 0, 1}) // RST_STREAM PROTOCOL_ERROR
		}
	}
}

// Attack: the request reaches the service whole, then its HTTP/2 stream is
// reset with PROTOCOL_ERROR. Go's HTTP/2 transport sends such a request
// again (up to six more times) whenever it can rewind the body; kin sends
// a model request once, whatever the transport would do.
func TestARequestThatArrivedIsNotSentAgainOverHTTP2(t *testing.T) {
	s := newH2Resetter(t)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
	for _, api := range []string{APIResponses, APIChat} {
		s.arrived.Store(0)
		cl := New(Config{APIKey: "sk-test", BaseURL: "http://" + s.ln.Addr().String() + "/v1/", Model: "m", API: api}, hc)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := cl.Stream(ctx, Request{Input: []Item{{Role: "user", Text: "hi"}}}, Handlers{})
		cancel()
		if err == nil {
			t.Fatalf("%s: no error", api)
		}
		if n := s.arrived.Load(); n != 1 {
			t.Errorf("%s: the request arrived %d times (%v)", api, n, err)
		}
		if !strings.Contains(err.Error(), "may have it") || strings.Contains(err.Error(), "could not reach") {
			t.Errorf("%s: %v", api, err)
		}
	}
}
