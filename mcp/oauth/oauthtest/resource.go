package oauthtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// ResourceOptions changes how a ResourceServer behaves.
type ResourceOptions struct {
	// Scopes are required of every token (a token without them gets 403
	// insufficient_scope) and named in the 401 challenge.
	Scopes []string
	// ScopesSupported is advertised in the protected-resource metadata.
	ScopesSupported []string
}

// ResourceServer is a go-sdk MCP server over streamable HTTP, behind bearer
// token middleware that checks tokens with an AuthServer. Its endpoint is
// URL; its protected-resource metadata lives at
// /.well-known/oauth-protected-resource/mcp and is named in every 401's
// WWW-Authenticate header.
type ResourceServer struct {
	// URL is the MCP endpoint (root + "/mcp"), the resource the tokens are
	// for.
	URL string

	srv *httptest.Server

	// mu guards the counters.
	mu           sync.Mutex
	requests     int
	unauthorized int
}

// NewResourceServer starts a protected MCP server, closed when the test ends.
// Its tool "whoami" answers with the X-Tenant header it was called with;
// "echo_token" and "echo_token_error" echo the Authorization header back,
// in a result and in a JSON-RPC error, as a careless server might.
func NewResourceServer(t testing.TB, as *AuthServer, opts ResourceOptions) *ResourceServer {
	t.Helper()
	rs := &ResourceServer{}
	rs.srv = httptest.NewUnstartedServer(nil)
	rs.srv.Start()
	root := rs.srv.URL
	rs.URL = root + "/mcp"

	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "says which tenant asked"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			tenant := ""
			if req.Extra != nil && req.Extra.Header != nil {
				tenant = req.Extra.Header.Get("X-Tenant")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "tenant=" + tenant}}}, nil, nil
		})
	header := func(req *mcp.CallToolRequest) string {
		if req.Extra == nil || req.Extra.Header == nil {
			return ""
		}
		return req.Extra.Header.Get("Authorization")
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo_token", Description: "echoes the credentials it got"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "you sent " + header(req)}}}, nil, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "echo_token_error", Description: "fails, quoting the credentials it got"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return nil, nil, &jsonrpc.Error{Code: -32001, Message: "rejected " + header(req)}
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)

	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		info := as.Verify(token)
		if info == nil || info.Resource != rs.URL {
			return nil, fmt.Errorf("%w: unknown, expired or foreign token", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{Scopes: info.Scopes, Expiration: info.Expiry}, nil
	}
	metaURL := root + "/.well-known/oauth-protected-resource/mcp"
	protected := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: metaURL,
		Scopes:              opts.Scopes,
	})(mcpHandler)

	mux := http.NewServeMux()
	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             rs.URL,
		AuthorizationServers: []string{as.URL},
		ScopesSupported:      opts.ScopesSupported,
	}))
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		protected.ServeHTTP(rec, r)
		rs.mu.Lock()
		rs.requests++
		if rec.status == http.StatusUnauthorized {
			rs.unauthorized++
		}
		rs.mu.Unlock()
	}))
	rs.srv.Config.Handler = mux
	t.Cleanup(rs.srv.Close)
	return rs
}

// Requests is how many MCP requests arrived, and how many were answered 401.
func (rs *ResourceServer) Requests() (total, unauthorized int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.requests, rs.unauthorized
}

// statusRecorder remembers the status written, passing flushes through (the
// streamable transport streams).
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(p)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
