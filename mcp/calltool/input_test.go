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
	tl, _ := inputServerBinding(t, calls, reply)
	return tl
}

func inputServerBinding(t *testing.T, calls *atomic.Int32, reply func(p *mcp.CallToolParamsRaw) *mcp.CallToolResult) (*calltool.Tool, *binding) {
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
	return tools(t, b, false)["ask"], b
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

// URL elicitation on 2026-07-28 works without an elicitationId: the
// question is asked as any other and its outcome comes by the one retry,
// which carries the person's answer (a continuation, not a re-send).
func TestURLInputWithoutElicitationID(t *testing.T) {
	var calls atomic.Int32
	var asked *mcp.ElicitParams
	var second *mcp.CallToolParamsRaw
	tl, b := inputServerBinding(t, &calls, func(p *mcp.CallToolParamsRaw) *mcp.CallToolResult {
		if len(p.InputResponses) == 0 {
			return &mcp.CallToolResult{RequestState: "s1", InputRequests: mcp.InputRequestMap{
				"login": &mcp.ElicitParams{Mode: "url", Message: "sign in", URL: "https://example.com/login"},
			}}
		}
		second = p
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "signed in"}}}
	})
	b.answer = func(p *mcp.ElicitParams) *mcp.ElicitResult {
		asked = p
		return &mcp.ElicitResult{Action: "accept"}
	}
	r := prepare(t, tl, `{}`).Run(context.Background(), nil)
	if r.Status != tool.StatusCompleted || !strings.Contains(r.Output, "signed in") {
		t.Fatalf("%+v", r)
	}
	if asked == nil || asked.Mode != "url" || asked.URL != "https://example.com/login" || asked.ElicitationID != "" {
		t.Fatalf("asked %+v", asked)
	}
	if calls.Load() != 2 || second == nil || second.RequestState != "s1" || second.InputResponses["login"] == nil {
		t.Fatalf("%d calls, second %+v", calls.Load(), second)
	}
}
