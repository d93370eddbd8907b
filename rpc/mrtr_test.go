package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// booking is a 2026-07-28 server whose tool asks two questions by
// input-required results (multi round-trip requests): how many seats, then
// which evening. It records every tools/call it receives.
type booking struct {
	mu    sync.Mutex
	calls []*mcp.CallToolParamsRaw
}

func (b *booking) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "booking", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "book", Description: "Books a table.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := *req.Params
			b.mu.Lock()
			b.calls = append(b.calls, &p)
			b.mu.Unlock()
			answer := func(id string) map[string]any {
				if r, ok := p.InputResponses[id].(*mcp.ElicitResult); ok && r.Action == "accept" {
					return r.Content
				}
				return nil
			}
			switch {
			case p.RequestState == "":
				return &mcp.CallToolResult{RequestState: "asked-seats", InputRequests: mcp.InputRequestMap{"seats": &mcp.ElicitParams{
					Message: "How many seats?", RequestedSchema: json.RawMessage(
						`{"type":"object","properties":{"seats":{"type":"integer","minimum":1,"maximum":8}},"required":["seats"]}`)}}}, nil
			case p.RequestState == "asked-seats" && answer("seats") != nil:
				return &mcp.CallToolResult{RequestState: fmt.Sprintf("asked-when:%v", answer("seats")["seats"]), InputRequests: mcp.InputRequestMap{
					"when": &mcp.ElicitParams{Message: "Which evening?", RequestedSchema: json.RawMessage(
						`{"type":"object","properties":{"day":{"type":"string","oneOf":[{"const":"fri","title":"Friday"},{"const":"sat","title":"Saturday"}]}},"required":["day"]}`)}}}, nil
			case strings.HasPrefix(p.RequestState, "asked-when:") && answer("when") != nil:
				return mcptest.Text(fmt.Sprintf("booked %s seats on %v", strings.TrimPrefix(p.RequestState, "asked-when:"), answer("when")["day"])), nil
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "unexpected round " + p.RequestState}}}, nil
		})
	return s
}

func (b *booking) received() []*mcp.CallToolParamsRaw {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*mcp.CallToolParamsRaw(nil), b.calls...)
}

// bookingWorld connects kin to a booking server on the 2026-07-28 protocol
// and scripts one call of its tool; answer answers each elicitation.
func bookingWorld(t *testing.T, answer func(req map[string]any) map[string]any) (*booking, *rpctest.Editor, string) {
	return bookingWorldWith(t, nil, answer)
}

// bookingWorldWith is bookingWorld with more settings in the server's entry.
func bookingWorldWith(t *testing.T, entry map[string]any, answer func(req map[string]any) map[string]any) (*booking, *rpctest.Editor, string) {
	b := &booking{}
	seen := &mcptest.Methods{}
	cfg := map[string]any{"type": "http", "url": mcptest.ServeHTTPStateless(t, b.server(), seen)}
	for k, v := range entry {
		cfg[k] = v
	}
	w := newWorld(t, map[string]any{"booking": cfg})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "allow_once")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "booking"), rpctest.Field("state", "connected")))
	if seen.Count("server/discover@2026-07-28") == 0 {
		t.Fatalf("not on the 2026-07-28 protocol: %v", seen.List())
	}
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "b1", Name: "mcp__booking__book", Arguments: "{}"}}}, modeltest.Reply{Text: []string{"done"}})
	ed.OnNote(func(n rpctest.Note) {
		var req map[string]any
		json.Unmarshal(n.Params, &req)
		switch n.Method {
		case "approval/request":
			respond(ed, req, "allow_once")
		case "elicitation/request":
			go ed.Call("elicitation/respond", answer(req), nil)
		}
	})
	sid := newSession(t, ed)
	tid := start(t, ed, sid, "book a table")
	if done := ed.Wait("turn/completed", rpctest.Field("turnId", tid)); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	return b, ed, sid
}

// Each question of an input-required result reaches the editor as an
// elicitation of that call; each accepted answer sends the call exactly
// once more, with the answer and the server's state; the call completes.
func TestInputRequiredAnswersRetryOncePerAnswer(t *testing.T) {
	b, ed, sid := bookingWorld(t, func(req map[string]any) map[string]any {
		content := map[string]any{"seats": 2}
		if req["message"] == "Which evening?" {
			content = map[string]any{"day": "sat"}
		}
		return map[string]any{"requestId": req["requestId"], "action": "accept", "content": content}
	})
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(call["output"]), "booked 2 seats on sat") {
		t.Errorf("output %v", call["output"])
	}
	got := b.received()
	if len(got) != 3 {
		t.Fatalf("the server saw %d calls, want 3 (one, then one per answer)", len(got))
	}
	if got[0].RequestState != "" || got[0].InputResponses != nil || got[1].RequestState != "asked-seats" ||
		got[2].RequestState != "asked-when:2" || len(got[1].InputResponses) != 1 || len(got[2].InputResponses) != 1 {
		t.Errorf("rounds %+v %+v %+v", got[0], got[1], got[2])
	}
	els := ed.Notes("elicitation/request")
	if len(els) != 2 || els[0]["sessionId"] != sid || els[0]["server"] != "booking" || els[1]["message"] != "Which evening?" {
		t.Fatalf("elicitations %v", els)
	}
	if f := els[1]["fields"].([]any)[0].(map[string]any); f["type"] != "enum" || fmt.Sprint(f["enumNames"]) != "[Friday Saturday]" {
		t.Errorf("titled field %v", f)
	}
	if n := len(ed.Notes("elicitation/resolved")); n != 2 {
		t.Errorf("%d elicitation/resolved", n)
	}
	var res rpc.SessionResumeResult
	ed.MustCall("session/resume", rpc.SessionIDParams{SessionID: sid}, &res)
	asked := 0
	for _, h := range res.History {
		if h.Type == "elicitation" && h.Server == "booking" && h.Decision == "accept" {
			asked++
		}
	}
	if asked != 2 {
		t.Errorf("history has %d elicitations: %+v", asked, res.History)
	}
}

// A declined question sends nothing more: the server saw the first call
// only, and the call ends denied, saying why.
func TestInputRequiredDeclineSendsNothingMore(t *testing.T) {
	b, ed, _ := bookingWorld(t, func(req map[string]any) map[string]any {
		return map[string]any{"requestId": req["requestId"], "action": "decline"}
	})
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), func(m map[string]any) bool {
		return m["status"] != "pending" && m["status"] != "awaiting_approval" && m["status"] != "running"
	}))
	if call["status"] != "denied" || !strings.Contains(fmt.Sprint(call["output"]), "the person declined the question") ||
		!strings.Contains(fmt.Sprint(call["output"]), "nothing more was sent") {
		t.Errorf("call %v", call)
	}
	if n := len(b.received()); n != 1 {
		t.Errorf("the server saw %d calls after a decline, want 1", n)
	}
	if r := ed.Wait("elicitation/resolved", nil); r["action"] != "decline" || r["reason"] != "person" {
		t.Errorf("resolved %v", r)
	}
}

// The person's time between the rounds of an input-required call is not
// the server's: with a one-second limit, answers that take four times
// that still reach the server, and the call completes.
func TestInputRequiredRoundsDoNotCountThePersonsTime(t *testing.T) {
	_, ed, _ := bookingWorldWith(t, map[string]any{"timeout": serverTimeoutMS}, func(req map[string]any) map[string]any {
		time.Sleep(personTakes)
		content := map[string]any{"seats": 2}
		if req["message"] == "Which evening?" {
			content = map[string]any{"day": "fri"}
		}
		return map[string]any{"requestId": req["requestId"], "action": "accept", "content": content}
	})
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "completed")))
	if !strings.Contains(fmt.Sprint(call["output"]), "booked 2 seats on fri") {
		t.Errorf("output %v", call["output"])
	}
}
