package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
)

// signInServer is an MCP server whose tool sends the person to a URL
// (URL-mode elicitation) and, once they went, says so
// (notifications/elicitation/complete).
func signInServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "accounts", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "connect", Description: "Connects your account.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", URL: "https://accounts.example/connect?code=1",
				ElicitationID: "srv-77", Message: "Connect your account"})
			if err != nil {
				return nil, err
			}
			if res.Action == "accept" {
				if err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: "srv-77"}); err != nil {
					return nil, err
				}
			}
			return mcptest.Text("connect: " + res.Action), nil
		})
	return s
}

// A server's URL-mode question reaches the client as elicitation/create
// (mode url, with kin's elicitationId); when the server says the URL is
// done with, the client hears elicitation/complete naming that same id.
func TestURLElicitationCompletesForTheClient(t *testing.T) {
	w := newWorld(t)
	url := mcptest.ServeHTTP(t, signInServer())
	c := w.connect(nil)
	c.initialize(map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	c.answer("allow_once")
	var asked CreateElicitationRequest
	c.on(MethodElicitationCreate, func(p json.RawMessage) (any, error) {
		_ = json.Unmarshal(p, &asked)
		return CreateElicitationResponse{Action: "accept"}, nil
	})
	var s NewSessionResponse
	c.call(MethodSessionNew, map[string]any{"cwd": w.ws, "mcpServers": []any{map[string]any{"type": "http", "name": "accounts", "url": url, "headers": []any{}}}}, &s)
	w.model.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "call_c", Name: "mcp__accounts__connect", Arguments: `{}`}}},
		modeltest.Reply{Text: []string{"Connected."}},
	)
	c.prompt(s.SessionID, text("connect my account"))
	if asked.Mode != "url" || asked.URL != "https://accounts.example/connect?code=1" || asked.ElicitationID == "" || asked.ElicitationID == "srv-77" {
		t.Fatalf("the elicitation asked: %+v", asked)
	}
	var done CompleteElicitationNotification
	c.until("elicitation/complete", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, f := range c.frames {
			if f.Dir == "kin" && f.Method == NotifyElicitationDone {
				_ = json.Unmarshal(f.Params, &done)
				return true
			}
		}
		return false
	})
	if done.ElicitationID != asked.ElicitationID {
		t.Errorf("elicitation/complete names %q, the question was %q", done.ElicitationID, asked.ElicitationID)
	}
	if out, _ := w.model.Requests()[1].LastToolOutput(); !strings.Contains(out, "connect: accept") {
		t.Errorf("the server answered %q", out)
	}
}
