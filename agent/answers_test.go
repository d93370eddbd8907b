package agent

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
)

// answerService is a Service whose turns a screen watches, over api.
func answerService(t *testing.T, api string) (*Service, *modeltest.Server, *screen, string) {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	scr := &screen{events: events{done: make(chan TurnDone, 8)}}
	svc := New(Options{Home: t.TempDir(), Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock", API: api},
		Tools: tool.Static(nil), Events: scr})
	t.Cleanup(svc.Shutdown)
	s, err := svc.NewSession(SessionOptions{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, m, scr, s.Info.SessionID
}

func turnOf(t *testing.T, svc *Service, scr *screen, sid, question string) TurnDone {
	t.Helper()
	if _, err := svc.StartTurn(sid, TextInput(question), nil); err != nil {
		t.Fatal(err)
	}
	return waitDone(t, scr.events)
}

// historyTypes is the session's history as its items' types (an assistant
// item that is a refusal as "refusal").
func historyTypes(t *testing.T, svc *Service, sid string) string {
	t.Helper()
	res, err := svc.Resume(sid, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, h := range res.History {
		if h.Refusal {
			types = append(types, "refusal:"+h.Text)
			continue
		}
		types = append(types, h.Type)
	}
	return strings.Join(types, " ")
}

// A refusal (issue 23, 1) is shown as one, ends the turn "refused" (not a
// silent "completed"), is kept in history as a refusal, and the next
// request tells the model it refused, on both APIs.
func TestARefusalEndsTheTurnRefusedAndIsKept(t *testing.T) {
	for _, api := range []string{model.APIResponses, model.APIChat} {
		t.Run(api, func(t *testing.T) {
			svc, m, scr, sid := answerService(t, api)
			m.Script(modeltest.Reply{Refusal: []string{"I can't ", "help with that."}}, modeltest.Reply{Text: []string{"Fine."}})
			if d := turnOf(t, svc, scr, sid, "do the bad thing"); d.Status != TurnRefused || d.Error != "" {
				t.Fatalf("the turn ended %+v", d)
			}
			if scr.refusal.String() != "I can't help with that." || scr.text.String() != "" {
				t.Errorf("shown: refusal %q, text %q", scr.refusal.String(), scr.text.String())
			}
			if got := historyTypes(t, svc, sid); got != "user refusal:I can't help with that. turn" {
				t.Errorf("history %s", got)
			}
			if d := turnOf(t, svc, scr, sid, "why not?"); d.Status != TurnCompleted {
				t.Fatalf("the next turn %+v", d)
			}
			if got := sent(m.Requests()[1]); got != "user: do the bad thing\nassistant: refusal=I can't help with that.\nuser: why not?" {
				t.Errorf("the next request carries\n%s", got)
			}
		})
	}
}

// DeepSeek's thinking mode (issue 23, 2): the reasoning_content streamed
// before a call goes back on that call's assistant message, in the same
// turn and in every later one.
func TestDeepSeekGetsItsReasoningBackOnItsToolCallMessage(t *testing.T) {
	svc, m, scr, sid := answerService(t, model.APIChat)
	m.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"I need the date first."}}},
			Calls: []modeltest.Call{{ID: "call_00_date", Name: "get_date", Arguments: "{}"}}},
		modeltest.Reply{Text: []string{"Tomorrow is the 13th."}},
		modeltest.Reply{Text: []string{"Yes."}},
	)
	if d := turnOf(t, svc, scr, sid, "what's tomorrow?"); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if d := turnOf(t, svc, scr, sid, "sure?"); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	want := `assistant: reasoning_content="I need the date first." call=call_00_date get_date {}`
	reqs := m.Requests()
	for i, r := range reqs[1:] {
		if got := sent(r); !strings.Contains(got, want+"\ntool call_00_date") {
			t.Errorf("request %d carries\n%s", i+2, got)
		}
	}
	if scr.reasoning.String() != "I need the date first." {
		t.Errorf("reasoning shown %q", scr.reasoning.String())
	}
	if got := historyTypes(t, svc, sid); got != "user reasoning toolCall assistant turn user assistant turn" {
		t.Errorf("history %s", got)
	}
}

// Two messages of one answer (issue 23, 6) are set apart on screen by a
// blank line and are two items in history, each with its phase.
func TestTwoMessagesOfOneAnswerAreTwoItems(t *testing.T) {
	svc, m, scr, sid := answerService(t, model.APIResponses)
	m.Script(modeltest.Reply{Recorded: corpusFile(t, "openai-responses-commentary-then-answer.http")})
	if d := turnOf(t, svc, scr, sid, "list the files"); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if got := scr.text.String(); !strings.HasPrefix(got, "Got it\n\nHere are the three files:") {
		t.Errorf("shown %q", got)
	}
	res, err := svc.Resume(sid, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, h := range res.History {
		if h.Type == "assistant" {
			texts = append(texts, h.Text)
		}
	}
	if len(texts) != 2 || texts[0] != "Got it" || !strings.HasPrefix(texts[1], "Here are") {
		t.Errorf("history's answers %q", texts)
	}
}

// Parallel calls on Chat Completions (issue 23, 8) go back as one
// assistant message with both calls, their results after it, in the turn
// and in the next one.
func TestParallelChatCallsGoBackAsTheModelSentThem(t *testing.T) {
	svc, m, scr, sid := answerService(t, model.APIChat)
	m.Script(
		modeltest.Reply{Text: []string{"Checking both."}, Calls: []modeltest.Call{
			{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_b", Name: "get_weather", Arguments: `{"city":"Tokyo"}`}}},
		modeltest.Reply{Text: []string{"Both sunny."}},
		modeltest.Reply{Text: []string{"Yes."}},
	)
	turnOf(t, svc, scr, sid, "Paris and Tokyo?")
	turnOf(t, svc, scr, sid, "sure?")
	want := "user: Paris and Tokyo?\n" +
		`assistant: Checking both. call=call_a get_weather {"city":"Paris"} call=call_b get_weather {"city":"Tokyo"}` +
		"\ntool call_a\ntool call_b\nassistant: Both sunny."
	reqs := m.Requests()
	if got := sent(reqs[1]); !strings.HasPrefix(got, strings.TrimSuffix(want, "\nassistant: Both sunny.")) {
		t.Errorf("the turn's next request carries\n%s", got)
	}
	if got := sent(reqs[2]); got != want+"\nuser: sure?" {
		t.Errorf("the next turn's request carries\n%s", got)
	}
}
