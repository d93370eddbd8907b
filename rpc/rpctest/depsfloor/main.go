// Command depsfloor is the floor of spawn to initialize that kin's required
// packages allow: initfloor's answer to initialize, written through
// jsonrpc2 with LSP framing, in a program that also links and sets up what
// kin cannot start without (zap's logger, openai-go's Responses and Chat
// Completions services, go-sdk's MCP client). Every Go package's init runs
// before main, so this is what spawn to initialize and memory at rest cost
// before kin's own code does anything. cmd/kinbench measures kin against
// it; it is test tooling, never shipped.
package main

import (
	"context"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/zap"
)

type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return nil }

func main() {
	log := zap.NewNop()
	opts := []option.RequestOption{option.WithBaseURL("http://127.0.0.1:1"), option.WithAPIKey("k"), option.WithMaxRetries(0)}
	// Set up as kin sets them up, and kept reachable so that the linker
	// keeps what kin links of them.
	services := []any{responses.NewResponseService(opts...), openai.NewChatCompletionService(opts...),
		mcp.NewClient(&mcp.Implementation{Name: "depsfloor", Version: "0"}, nil)}
	ctx := context.Background()
	conn := jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(stdio{}, jsonrpc2.VSCodeObjectCodec{}),
		jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, r *jsonrpc2.Request) (any, error) {
			if r.Method != "initialize" {
				return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: r.Method}
			}
			log.Info("initialized", zap.Int("services", len(services)))
			return map[string]any{"protocolVersion": "1", "serverInfo": map[string]any{"name": "depsfloor", "version": "0"}}, nil
		}))
	<-conn.DisconnectNotify()
}
