package mcptest

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
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

// ServeHTTPStateless serves s like ServeHTTP, but stateless: only so does
// the SDK's HTTP server speak the 2026-07-28 protocol (server/discover,
// subscriptions/listen; a stateful one makes clients fall back to
// initialize). When seen is not nil it records the requests.
func ServeHTTPStateless(t testing.TB, s *mcp.Server, seen *Methods) string {
	t.Helper()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true})
	if seen != nil {
		h = seen.Wrap(h)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// Methods records the requests an HTTP server receives, each as
// "<method>@<version>" from the Mcp-Method and Mcp-Protocol-Version headers
// (the SDK sets the method header on 2026-07-28 requests only).
type Methods struct {
	mu   sync.Mutex
	list []string
}

// Wrap records each request to h.
func (m *Methods) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.list = append(m.list, r.Header.Get("Mcp-Method")+"@"+r.Header.Get("Mcp-Protocol-Version"))
		m.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// Count counts the requests recorded as entry ("<method>@<version>").
func (m *Methods) Count(entry string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.list {
		if e == entry {
			n++
		}
	}
	return n
}

// List returns the requests recorded so far.
func (m *Methods) List() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.list)
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
