package calltool_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/connect"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// inputServer serves one tool on the 2026-07-28 protocol whose every
// answer is reply; calls counts the calls it saw.
func inputServer(t *testing.T, calls *atomic.Int32, reply func(p *mcp.CallToolParamsRaw) *mcp.CallToolResult) *calltool.Tool {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "in", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return reply(req.Params), nil
		})
	srv := mcptest.HTTPConfig("in", mcptest.ServeHTTPStateless(t, s, nil), nil)
	// As the manager dials: the SDK's own input loop is off.
	c, err := connect.Dial(context.Background(), srv, connect.Options{Client: mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b := &binding{name: "in", conn: c, dest: srv.Display().Launch}
	b.answer = func(*mcp.ElicitParams) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}
	}
	return tools(t, b, false)["ask"]
}

func question() mcp.InputRequestMap {
	return mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "ok?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}}
}

// Input requests kin cannot answer end the call failed after the first
// round; a server that never stops asking gets MaxInputRounds calls.
func TestInputRequiredThatCannotBeAnswered(t *testing.T) {
	for name, tc := range map[string]struct {
		reply func(p *mcp.CallToolParamsRaw) *mcp.CallToolResult
		calls int32
		want  string
	}{
		"sampling": {func(*mcp.CallToolParamsRaw) *mcp.CallToolResult {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"m": &mcp.CreateMessageParams{MaxTokens: 10}}}
		}, 1, "a model answer (sampling), which kin does not offer"},
		"roots": {func(*mcp.CallToolParamsRaw) *mcp.CallToolResult {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}
		}, 1, "the workspace roots"},
		"call again later": {func(*mcp.CallToolParamsRaw) *mcp.CallToolResult {
			return &mcp.CallToolResult{RequestState: "busy", InputRequests: mcp.InputRequestMap{}}
		}, 1, "asked to be called again later"},
		"endless": {func(*mcp.CallToolParamsRaw) *mcp.CallToolResult {
			return &mcp.CallToolResult{RequestState: "again", InputRequests: question()}
		}, calltool.MaxInputRounds, "asked for input 10 times"},
	} {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int32
			r := prepare(t, inputServer(t, &calls, tc.reply), `{}`).Run(context.Background(), nil)
			if r.Status != tool.StatusFailed || !strings.Contains(r.Output, tc.want) || !strings.Contains(r.Output, "nothing more was sent") {
				t.Errorf("result %+v", r)
			}
			if n := calls.Load(); n != tc.calls {
				t.Errorf("%d calls, want %d", n, tc.calls)
			}
		})
	}
}
