package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/mcp/mcptest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// The server's time limit in these tests, and how long the person takes:
// several times the limit, so that a clock that ran while the person was
// asked would have run out for certain, however slow the machine.
const (
	serverTimeoutMS = 1000
	personTakes     = 4 * time.Second
)

// clinic is a server whose tool "book" asks the person with
// elicitation/create (the form, or a link when url is set) and reports what
// it got. With release set it answers the call, without the answer, once
// release is closed, and leaves its question open: the question outlives
// the call. Its questions end with the test (quit), so that the test's
// HTTP server can close.
type clinic struct {
	url     string
	release chan struct{}
	hang    bool // after the answer, never answer the call
	quit    chan struct{}
}

func (c *clinic) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "clinic", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "book", Description: "Books an appointment after asking for the details.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := &mcp.ElicitParams{Message: "Please provide your details", RequestedSchema: json.RawMessage(profileForm)}
			if c.url != "" {
				p = &mcp.ElicitParams{Mode: "url", Message: "Confirm at the clinic's page", URL: c.url, ElicitationID: "e-1"}
			}
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				select {
				case <-c.quit:
					cancel()
				case <-ctx.Done():
				}
			}()
			if c.release != nil {
				go req.Session.Elicit(ctx, p)
				select {
				case <-c.release:
				case <-ctx.Done():
				}
				return mcptest.Text("booked without asking further"), nil
			}
			res, err := req.Session.Elicit(ctx, p)
			if err != nil {
				return nil, err
			}
			if c.hang {
				<-ctx.Done()
			}
			b, _ := json.Marshal(res.Content)
			return mcptest.Text(res.Action + ": " + string(b)), nil
		})
	return s
}

func clinicServer(url string, release chan struct{}) *clinic {
	return &clinic{url: url, release: release, quit: make(chan struct{})}
}

// clinicWorld connects kin to a clinic server whose calls may take
// serverTimeoutMS, and starts a turn that calls its tool (approved); it
// returns the editor, the turn and the form as the editor got it.
func clinicWorld(t *testing.T, c *clinic) (*world, *rpctest.Editor, string, rpc.ElicitationRequest) {
	t.Helper()
	url := mcptest.ServeHTTP(t, c.server())
	t.Cleanup(func() { close(c.quit) }) // before the HTTP server closes
	w := newWorld(t, map[string]any{"clinic": map[string]any{"type": "http", "url": url, "timeout": serverTimeoutMS}})
	ed := w.editor()
	respond(ed, ed.Wait("approval/request", rpctest.Field("kind", "server_launch")), "allow_once")
	ed.Wait("mcp/status", rpctest.All(rpctest.Field("server", "clinic"), rpctest.Field("state", "connected")))
	w.model.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "b1", Name: "mcp__clinic__book", Arguments: "{}"}}}, modeltest.Reply{Text: []string{"done"}})
	answerApprovals(ed, func(map[string]any) string { return "allow_once" })
	sid := newSession(t, ed)
	tid := start(t, ed, sid, "book me in")
	var el rpc.ElicitationRequest
	b, _ := json.Marshal(ed.Wait("elicitation/request", nil))
	if err := json.Unmarshal(b, &el); err != nil {
		t.Fatal(err)
	}
	if el.CallID != "b1" || el.TurnID != tid {
		t.Errorf("the question is not attributed to its call: %+v", el)
	}
	return w, ed, tid, el
}

// A person who takes their time over a form (here four times the server's
// one-second limit; in life two minutes against thirty seconds) still gets
// their answer to the server, and the call completes: the call's clock
// stops while the person is asked.
func TestAPersonWhoTakesTheirTimeOverAFormIsHeard(t *testing.T) {
	_, ed, tid, el := clinicWorld(t, clinicServer("", nil))
	time.Sleep(personTakes) // the person reads the form, thinks, types
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept",
		Content: map[string]any{"name": "Ana", "fish": []string{"fish-2"}}}, nil)
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "completed")))
	if out := fmt.Sprint(call["output"]); !strings.Contains(out, `accept: {"fish":["fish-2"],"hero":"hero-1","name":"Ana","subscribe":false}`) {
		t.Errorf("the server got %s", out)
	}
	if done := completed(ed, tid); done["status"] != "completed" {
		t.Errorf("turn %v", done)
	}
	if r := ed.Wait("elicitation/resolved", rpctest.Field("requestId", el.RequestID)); r["reason"] != "person" {
		t.Errorf("resolved %v", r)
	}
}

// The same for a link (URL elicitation): the person's time opening it is
// not the server's.
func TestAPersonWhoTakesTheirTimeOverALinkIsHeard(t *testing.T) {
	_, ed, tid, el := clinicWorld(t, clinicServer("https://clinic.example/confirm", nil))
	if el.Mode != "url" {
		t.Fatalf("asked %+v", el)
	}
	time.Sleep(personTakes)
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept"}, nil)
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "completed")))
	if out := fmt.Sprint(call["output"]); !strings.Contains(out, "accept") {
		t.Errorf("the server got %s", out)
	}
	completed(ed, tid)
}

// The clock runs again once the person answered: a server that then takes
// longer than its limit still times out (unknown outcome), so the pause
// is only the person's.
func TestTheCallsClockRunsAgainAfterTheAnswer(t *testing.T) {
	c := clinicServer("", nil)
	c.hang = true
	_, ed, tid, el := clinicWorld(t, c)
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept", Content: map[string]any{"name": "Ana", "fish": []string{"fish-1"}}}, nil)
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "unknown")))
	if out := fmt.Sprint(call["output"]); !strings.Contains(out, "no reply within 1s") {
		t.Errorf("output %s", out)
	}
	completed(ed, tid)
}

// A form whose request has ended is closed, and elicitation/resolved says
// why: the call answered without waiting for it (call_ended), the turn was
// cancelled (cancelled), the server was stopped (server_gone). Nothing the
// person answers afterwards reaches anyone.
func TestAFormWhoseRequestEndedIsClosedWithTheReason(t *testing.T) {
	t.Run("call ended", func(t *testing.T) {
		release := make(chan struct{})
		_, ed, tid, el := clinicWorld(t, clinicServer("", release))
		close(release)
		r := ed.Wait("elicitation/resolved", rpctest.Field("requestId", el.RequestID))
		if r["reason"] != "call_ended" || r["action"] != "cancel" {
			t.Errorf("resolved %v", r)
		}
		completed(ed, tid)
		if code, _ := ed.CallErr("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "decline"}); code != rpc.CodeNotFound {
			t.Errorf("a late answer: %d", code)
		}
	})
	t.Run("turn cancelled", func(t *testing.T) {
		_, ed, tid, el := clinicWorld(t, clinicServer("", nil))
		ed.MustCall("turn/cancel", rpc.SessionIDParams{SessionID: el.SessionID}, nil)
		if r := ed.Wait("elicitation/resolved", rpctest.Field("requestId", el.RequestID)); r["reason"] != "cancelled" {
			t.Errorf("resolved %v", r)
		}
		completed(ed, tid)
	})
	t.Run("server stopped", func(t *testing.T) {
		_, ed, _, el := clinicWorld(t, clinicServer("", nil))
		ed.MustCall("mcp/setEnabled", map[string]any{"name": "clinic", "enabled": false}, nil)
		go ed.Call("mcp/apply", nil, nil)
		if r := ed.Wait("elicitation/resolved", rpctest.Field("requestId", el.RequestID)); r["reason"] != "server_gone" {
			t.Errorf("resolved %v", r)
		}
	})
}

// The form's fields come in the order the server wrote its properties
// (profileForm: name, email, age, ...), not by name, each with its
// description.
func TestFormFieldsKeepTheServersOrder(t *testing.T) {
	_, ed, _, el := clinicWorld(t, clinicServer("", nil))
	var names []string
	for _, f := range el.Fields {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "name email age subscribe color hero fish tags member" {
		t.Errorf("fields in order %s", got)
	}
	if el.Fields[3].Description != "Send me the newsletter" {
		t.Errorf("subscribe's description %q", el.Fields[3].Description)
	}
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "decline"}, nil)
}

// One bad field never discards the form: an answer with bad fields is
// refused with -32602 whose data names every field that does not fit and
// why (in the form's order), the question stays open, and the answer with
// those fields corrected, the rest as before, is what the server gets.
func TestABadFieldIsNamedAndTheFormStaysOpen(t *testing.T) {
	_, ed, tid, el := clinicWorld(t, clinicServer("", nil))
	answer := map[string]any{"name": "Ana", "email": "not-an-address", "age": -1, "fish": []string{"fish-2"}, "nickname": "A"}
	err := ed.Call("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept", Content: answer}, nil)
	re, ok := err.(*jsonrpc2.Error)
	if !ok || re.Code != rpc.CodeInvalidParams || re.Data == nil {
		t.Fatalf("answer refused with %v", err)
	}
	var data rpc.ElicitationAnswerError
	if err := json.Unmarshal(*re.Data, &data); err != nil {
		t.Fatal(err)
	}
	want := []rpc.ElicitationFieldError{{Name: "email", Message: "must be an email address"}, {Name: "age", Message: "must be at least 0"},
		{Name: "nickname", Message: "is not a field of this form"}}
	if !reflect.DeepEqual(data.Fields, want) {
		t.Errorf("data %+v, want %+v", data.Fields, want)
	}
	answer["email"], answer["age"] = "ana@example.com", 31
	delete(answer, "nickname")
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: el.RequestID, Action: "accept", Content: answer}, nil)
	call := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "b1"), rpctest.Field("status", "completed")))
	if out := fmt.Sprint(call["output"]); !strings.Contains(out, `accept: {"age":31,"email":"ana@example.com","fish":["fish-2"],"hero":"hero-1","name":"Ana","subscribe":false}`) {
		t.Errorf("the server got %s", out)
	}
	completed(ed, tid)
}
