package rpc

import (
	"bytes"
	"errors"
	"strings"
)

// What the LSP framing (stream.go) refuses although it is framed: what no
// editor sends.

// errHTTPRequest ends a connection that speaks HTTP (see httpRequest).
var errHTTPRequest = errors.New("an HTTP request (a web page?) on kin's connection; closing it unread")

// httpRequest reports whether a header line is an HTTP request's: its
// request line ("POST /x HTTP/1.1"), or a header every browser sends and
// no editor does. kin serve --listen has no authentication, and a web page
// can post to a loopback port without asking anyone: an HTTP request's
// headers end with a Content-Length and its body is the page's, so read as
// frames the page could send kin any request it liked. Such a connection is
// closed, not answered and skipped: what follows is still the page's.
func httpRequest(line string) bool {
	// The request line, or its end when a long one was skipped into.
	if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[len(f)-1], "HTTP/") {
		return true
	}
	name, _, ok := strings.Cut(line, ":")
	if !ok {
		return false
	}
	name = strings.ToLower(strings.TrimSpace(name))
	switch name {
	case "host", "origin", "referer", "user-agent", "connection", "upgrade":
		return true
	}
	return strings.HasPrefix(name, "sec-fetch-")
}

// httpMethod reports whether b starts with an HTTP method and its space.
func httpMethod(b []byte) bool {
	for _, m := range []string{"GET ", "POST ", "PUT ", "HEAD ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "} {
		if bytes.HasPrefix(b, []byte(m)) {
			return true
		}
	}
	return false
}
