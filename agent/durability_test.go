package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// events collects what a Service reports; turn ends arrive on done.
type events struct{ done chan TurnDone }

func (events) TurnStarted(TurnStarted)  {}
func (events) Delta(Delta)              {}
func (events) ToolCall(ToolCall)        {}
func (events) Notice(Notice)            {}
func (events) Reasoning(ReasoningDelta) {}
func (events) Usage(UsageUpdate)        {}
func (events) Plan(PlanUpdate)          {}
func (e events) TurnDone(d TurnDone)    { e.done <- d }

func testService(t *testing.T, tools ...tool.Tool) (*Service, *modeltest.Server, events) {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	ev := events{done: make(chan TurnDone, 8)}
	svc := New(Options{Home: t.TempDir(), Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
		Tools: tool.Static(tools), Events: ev})
	t.Cleanup(svc.Shutdown)
	return svc, m, ev
}

func waitDone(t *testing.T, ev events) TurnDone {
	t.Helper()
	select {
	case d := <-ev.done:
		return d
	case <-time.After(20 * time.Second):
		t.Fatal("no turn end")
	}
	return TurnDone{}
}

func (s *Service) syncs(id string) int {
	s.mu.Lock()
	sess := s.sessions[id]
	s.mu.Unlock()
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	return sess.log.Syncs()
}

// A text turn syncs once: its end, before turn/completed. Everything else
// on its way (title, question, the answer's pieces) is only written.
func TestATextTurnSyncsOnce(t *testing.T) {
	svc, m, ev := testService(t)
	opened, err := svc.NewSession(SessionOptions{Roots: []string{t.TempDir()}})
	info := opened.Info
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		m.Script(modeltest.Reply{Text: []string{"Hel", "lo"}})
		before := svc.syncs(info.SessionID)
		if _, err := svc.StartTurn(info.SessionID, TextInput("hi"), nil); err != nil {
			t.Fatal(err)
		}
		if d := waitDone(t, ev); d.Status != TurnCompleted {
			t.Fatalf("turn %d: %+v", i, d)
		}
		if n := svc.syncs(info.SessionID) - before; n > 2 || n < 1 {
			t.Errorf("turn %d synced %d times (want 1, at most 2)", i, n)
		}
	}
}

// probe is a tool that notes, when it runs, whether its call's record was
// already synced.
type probe struct {
	svc          *Service
	sid          string
	atPrepare    int
	syncedBefore bool
}

func (p *probe) Spec() tool.Spec {
	return tool.Spec{Name: "probe", Parameters: json.RawMessage(`{"type":"object"}`), Kind: tool.KindRead}
}

func (p *probe) Prepare(ctx context.Context, env tool.Env, args json.RawMessage) (*tool.Action, error) {
	p.atPrepare = p.svc.syncs(p.sid) // the call's record is written by now
	return &tool.Action{Run: func(context.Context, func(string)) tool.Result {
		p.syncedBefore = p.svc.syncs(p.sid) > p.atPrepare
		return tool.Result{Status: tool.StatusCompleted, Output: "ok"}
	}}, nil
}

// A call's record is durable before the call runs: the unknown-outcome rule
// depends on it.
func TestACallIsDurableBeforeItRuns(t *testing.T) {
	p := &probe{}
	svc, m, ev := testService(t, p)
	opened, _ := svc.NewSession(SessionOptions{Roots: []string{t.TempDir()}})
	info := opened.Info
	p.svc, p.sid = svc, info.SessionID
	m.Script(modeltest.Reply{Calls: []modeltest.Call{{ID: "c1", Name: "probe"}}}, modeltest.Reply{Text: []string{"done"}})
	svc.StartTurn(info.SessionID, TextInput("probe it"), nil)
	if d := waitDone(t, ev); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if !p.syncedBefore {
		t.Error("the call ran before its record was synced")
	}
	v, _ := svc.store.View(info.SessionID, session.Query{Limit: 10})
	if items := v.Page().Items; len(items) != 4 || items[1].Status != "completed" {
		t.Errorf("history %+v", items)
	}
}

// The answer's pieces are written as they stream (after a short while, or
// once a piece is big enough), so a killed kin keeps what was shown.
func TestAnAnswerIsRecordedInPiecesAsItStreams(t *testing.T) {
	svc, _, _ := testService(t)
	opened, _ := svc.NewSession(SessionOptions{Roots: []string{t.TempDir()}})
	info := opened.Info
	tr := &turn{svc: svc, sess: svc.sessions[info.SessionID], id: "t_1", abort: func(error) {}}
	a := newAnswer(tr)
	var fire func()
	a.after = func(_ time.Duration, f func()) func() bool { fire = f; return func() bool { return true } }
	last := func() session.HistoryItem {
		v, err := svc.store.View(info.SessionID, session.Query{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		items := v.Page().Items
		return items[len(items)-1]
	}

	a.add("shown ", false)
	if fire == nil {
		t.Fatal("a buffered delta set no timer")
	}
	fire() // the timer
	if it := last(); it.Type != "assistant" || it.Text != "shown " {
		t.Fatalf("after the timer: %+v", it)
	}
	a.add(strings.Repeat("x", answerPiece), false) // big enough to go at once
	if it := last(); it.Text != "shown "+strings.Repeat("x", answerPiece) {
		t.Errorf("a full piece was not written at once (%d bytes on record)", len(it.Text))
	}
	a.add(" end", false)
	a.end("")
	if it := last(); !strings.HasSuffix(it.Text, "x end") {
		t.Errorf("end did not write the rest: %q", it.Text[len(it.Text)-10:])
	}
}
