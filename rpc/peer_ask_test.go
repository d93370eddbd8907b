package rpc_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/rpc"
	"github.com/kin-dev/kin/rpc/rpctest"
)

// forms is what an editor that shows forms declares.
var forms = map[string]any{"approvals": true, "elicitation": map[string]any{"form": true, "url": true}}

func askCall(id string) modeltest.Reply {
	return modeltest.Reply{Calls: []modeltest.Call{{ID: id, Name: "ask",
		Arguments: args(map[string]any{"questions": []any{map[string]any{"question": "Which database should the tests use?", "options": []string{"postgres", "sqlite"}}}})}}}
}

// answerKin answers kin's own questions with how(req).
func answerKin(ed *rpctest.Editor, how func(req map[string]any) rpc.ElicitationRespondParams) {
	ed.OnNote(func(n rpctest.Note) {
		if n.Method != "elicitation/request" {
			return
		}
		var req map[string]any
		_ = jsonUnmarshal(n.Params, &req)
		if req["source"] != "kin" {
			return
		}
		p := how(req)
		p.RequestID = req["requestId"].(string)
		go ed.Call("elicitation/respond", p, nil)
	})
}

func TestAskToolAnsweredDeclinedAndDismissed(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(askCall("a1"), modeltest.Reply{Text: []string{"sqlite it is"}},
		askCall("a2"), modeltest.Reply{Text: []string{"ok"}},
		askCall("a3"), modeltest.Reply{Text: []string{"ok"}})
	ed := rpctest.Start(t, e.Options())
	ed.InitializeWith(forms, e.WS)
	sid := newSessionWith(t, ed, nil)["sessionId"].(string)
	var action atomic.Value
	action.Store("accept")
	answerKin(ed, func(req map[string]any) rpc.ElicitationRespondParams {
		if a := action.Load().(string); a != "accept" {
			return rpc.ElicitationRespondParams{Action: a}
		}
		return rpc.ElicitationRespondParams{Action: "accept", Content: map[string]any{"q1": "sqlite"}}
	})

	completed(ed, start(t, ed, sid, "set up the tests"))
	req := ed.Wait("elicitation/request", rpctest.Field("callId", "a1"))
	if req["source"] != "kin" || req["server"] != nil || req["mode"] != "form" || req["message"] != "Which database should the tests use?" {
		t.Errorf("request %v", req)
	}
	f := req["fields"].([]any)[0].(map[string]any)
	if f["type"] != "enum" || f["required"] != true || len(f["enum"].([]any)) != 2 {
		t.Errorf("field %v", f)
	}
	if out, _ := e.Model.Requests()[1].LastToolOutput(); out != "The person answered:\nQ: Which database should the tests use?\nA: sqlite" {
		t.Errorf("the model was told %q", out)
	}
	ed.Wait("elicitation/resolved", rpctest.All(rpctest.Field("requestId", req["requestId"]), rpctest.Field("action", "accept")))

	action.Store("decline")
	completed(ed, start(t, ed, sid, "again"))
	if out, _ := e.Model.Requests()[3].LastToolOutput(); !strings.Contains(out, "[denied]") || !strings.Contains(out, "declined to answer") {
		t.Errorf("the model was told %q for a decline", out)
	}
	action.Store("cancel")
	completed(ed, start(t, ed, sid, "and again"))
	if out, _ := e.Model.Requests()[5].LastToolOutput(); !strings.Contains(out, "dismissed the question") {
		t.Errorf("the model was told %q for a cancel", out)
	}
	var decisions []string
	for _, it := range itemsOf(historyOf(t, ed, sid), "elicitation") {
		if it["source"] != "kin" || it["server"] != nil {
			t.Errorf("item %v", it)
		}
		decisions = append(decisions, it["decision"].(string))
	}
	if strings.Join(decisions, " ") != "accept decline cancel" {
		t.Errorf("recorded %v", decisions)
	}
}

// An answer that is not one of the options is refused, and the question
// stays open for a right one.
func TestAskToolRefusesAnAnswerOutsideTheOptions(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(askCall("a1"), modeltest.Reply{Text: []string{"ok"}})
	ed := rpctest.Start(t, e.Options())
	ed.InitializeWith(forms, e.WS)
	sid := newSessionWith(t, ed, nil)["sessionId"].(string)
	tid := start(t, ed, sid, "set up")
	req := ed.Wait("elicitation/request", rpctest.Field("callId", "a1"))
	id := req["requestId"].(string)
	if code, msg := ed.CallErr("elicitation/respond", rpc.ElicitationRespondParams{RequestID: id, Action: "accept", Content: map[string]any{"q1": "mysql"}}); code != rpc.CodeInvalidParams || !strings.Contains(msg, "q1") {
		t.Errorf("an answer outside the options: %d %s", code, msg)
	}
	ed.MustCall("elicitation/respond", rpc.ElicitationRespondParams{RequestID: id, Action: "accept", Content: map[string]any{"q1": "postgres"}}, nil)
	completed(ed, tid)
}

// With nobody to answer (an editor that shows no forms: a piped kin chat)
// the question is declined at once, said so to the model, and recorded.
func TestAskToolHeadlessIsDeclinedAndRecorded(t *testing.T) {
	e := newEnv(t)
	e.Model.Script(askCall("a1"), modeltest.Reply{Text: []string{"I will assume postgres."}})
	ed, sid := e.editor() // declares no capabilities
	if done := completed(ed, start(t, ed, sid, "set up the tests")); done["status"] != "completed" {
		t.Fatalf("turn %v", done)
	}
	if n := ed.Notes("elicitation/request"); len(n) != 0 {
		t.Errorf("a headless editor was asked: %v", n)
	}
	c := ed.Wait("turn/toolCall", rpctest.All(rpctest.Field("callId", "a1"), rpctest.Field("status", "denied")))
	if !strings.Contains(c["output"].(string), "no person can answer") {
		t.Errorf("output %q", c["output"])
	}
	items := itemsOf(historyOf(t, ed, sid), "elicitation")
	if len(items) != 1 || items[0]["source"] != "kin" || items[0]["decision"] != "decline" || items[0]["reason"] != "headless" {
		t.Errorf("recorded %v", items)
	}
}
