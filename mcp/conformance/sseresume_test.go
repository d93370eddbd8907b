package conformance_test

// The conformance scenario sse-retry (SEP-1699) fails against kin because
// connect turns the SDK's stream resumption off (MaxRetries: -1). These
// tests show the same failure with the go-sdk's own server, without Node.
//
// A 2025-11-25 server may close a call's SSE stream after an event that
// carries an id and a retry delay, and answer the call on a GET that
// resumes the stream (Last-Event-ID). Resuming re-sends nothing: the call
// was POSTed once and the GET only asks for the rest of its reply stream.
// With MaxRetries -1 the SDK gives up at once ("connection aborted after 0
// attempts"), the call becomes "unknown" and the whole session fails.
//
// TestSSEResumeKin pins that kin's transport resumes a response stream the
// server closed (it once had the SDK's reconnects off, which made such calls
// unknown and dropped the session). TestSSEResumeSDKControl is the same
// exchange with the SDK's default retries: the tool ran once.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/mcp/config"
	"github.com/kin-dev/kin/mcp/connect"
)

// pollingServer serves one tool, "slow", that closes its SSE stream (retry
// 100 ms) before answering, as SEP-1699 allows. It counts the calls that
// reached the handler.
func pollingServer(t *testing.T) (url string, calls *atomic.Int32) {
	t.Helper()
	calls = &atomic.Int32{}
	s := mcp.NewServer(&mcp.Implementation{Name: "polling", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			if req.Extra != nil && req.Extra.CloseSSEStream != nil {
				req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 100 * time.Millisecond})
			}
			time.Sleep(200 * time.Millisecond)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done after polling"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, calls
}

func callSlow(t *testing.T, cs *mcp.ClientSession, calls *atomic.Int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("call failed (the tool ran %d times): %v", calls.Load(), err)
	}
	if len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "done after polling") {
		t.Fatalf("unexpected result %+v", res)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("the session did not survive the resumed call: %v", err)
	}
}

// TestSSEResumeKin: kin's connect as the manager dials (no pinned version;
// against this server the handshake settles on 2025-11-25, as it does with
// the conformance servers and the TypeScript SDK's).
func TestSSEResumeKin(t *testing.T) {
	url, calls := pollingServer(t)
	srv := config.Server{Name: "polling", Scope: config.ScopeGlobal, Transport: config.TransportHTTP, URL: url}
	c, err := connect.Dial(context.Background(), srv, connect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Logf("negotiated %s", c.ProtocolVersion)
	callSlow(t, c.Session, calls)
	if n := calls.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}

// TestSSEResumeSDKControl: the same exchange with the SDK's default
// reconnects. The call completes and reached the server exactly once.
func TestSSEResumeSDKControl(t *testing.T) {
	url, calls := pollingServer(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "control", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callSlow(t, cs, calls)
	if n := calls.Load(); n != 1 {
		t.Fatalf("the tool ran %d times, want 1", n)
	}
}
