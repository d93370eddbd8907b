package mcptest

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
)

// ServeHTTP serves s over streamable HTTP on a loopback httptest server,
// closed when the test ends. It returns the endpoint URL.
func ServeHTTP(t testing.TB, s *mcp.Server) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// ServeHTTPHandler serves h, closed when the test ends, and returns the
// server (for its URL and Close).
func ServeHTTPHandler(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// HTTPConfig is a loaded-looking http server entry.
func HTTPConfig(name, url string, headers map[string]string) config.Server {
	return config.Server{Name: name, Scope: config.ScopeGlobal, Transport: config.TransportHTTP, URL: url, Headers: headers}
}
