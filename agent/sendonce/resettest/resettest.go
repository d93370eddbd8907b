// Package resettest is an HTTP/2 peer for tests that takes each request
// whole and then resets its stream with PROTOCOL_ERROR: a broken service,
// or a proxy in front of one, after the request arrived. It speaks
// cleartext HTTP/2 with prior knowledge (see Client) and counts the
// requests that arrived whole.
package resettest

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// Server is the peer.
type Server struct {
	ln      net.Listener
	arrived atomic.Int32
}

// New starts a Server, closed when the test ends.
func New(t testing.TB) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln}
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

// URL is the server's http:// address.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Arrived is how many requests arrived whole; Reset starts the count again.
func (s *Server) Arrived() int { return int(s.arrived.Load()) }
func (s *Server) Reset()       { s.arrived.Store(0) }

// Transport is a client transport that speaks HTTP/2 to http:// URLs.
func Transport() *http.Transport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{Protocols: &p}
}

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	if _, err := io.ReadFull(c, make([]byte, 24)); err != nil { // the client's preface
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
