package agent

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/tool"
)

func flowService(t *testing.T, cfg model.Config) (*Service, *modeltest.Server, *screen, string) {
	t.Helper()
	m := modeltest.New()
	t.Cleanup(m.Close)
	cfg.APIKey, cfg.BaseURL = "k", m.URL()
	if cfg.Model == "" {
		cfg.Model = "mock"
	}
	rec := &screen{events: events{done: make(chan TurnDone, 8)}}
	svc := New(Options{Home: t.TempDir(), Model: cfg, Tools: tool.Static(builtin.Tools(builtin.Options{})), Events: rec})
	t.Cleanup(svc.Shutdown)
	return svc, m, rec, workspace(t)
}

func ask(t *testing.T, svc *Service, rec *screen, sid string, in Input) TurnDone {
	t.Helper()
	if _, err := svc.StartTurn(sid, in, nil); err != nil {
		t.Fatal(err)
	}
	return waitDone(t, rec.events)
}

func TestReasoningCarriesOverToolCallsAndTurns(t *testing.T) {
	svc, m, rec, ws := flowService(t, model.Config{})
	writeFile(t, filepath.Join(ws, "a.go"), "package a\n")
	s, _ := svc.NewSession(SessionOptions{Roots: []string{ws}})
	m.Script(
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"Read a.go first."}, Encrypted: "enc-1"}},
			Calls: []modeltest.Call{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		modeltest.Reply{Reasoning: []modeltest.Reasoning{{Summary: []string{"It is fine."}, Encrypted: "enc-2"}}, Text: []string{"Fine."}},
		modeltest.Reply{Text: []string{"Yes."}},
	)
	if d := ask(t, svc, rec, s.Info.SessionID, TextInput("check a.go")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	if d := ask(t, svc, rec, s.Info.SessionID, TextInput("sure?")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	reqs := m.Requests()
	enc := func(r modeltest.Request) (out []string) {
		for _, it := range r.ReasoningItems() {
			out = append(out, it["encrypted_content"].(string))
		}
		return out
	}
	if got := enc(reqs[1]); strings.Join(got, ",") != "enc-1" {
		t.Errorf("the same turn's next request carries %v", got)
	}
	if got := enc(reqs[2]); strings.Join(got, ",") != "enc-1,enc-2" {
		t.Errorf("the next turn's request carries %v", got)
	}
	if rec.reasoning.String() != "Read a.go first.It is fine." {
		t.Errorf("reasoning deltas %q", rec.reasoning.String())
	}
	res, _ := svc.Resume(s.Info.SessionID, ResumeOptions{})
	var types []string
	for _, h := range res.History {
		types = append(types, h.Type)
	}
	if got := strings.Join(types, " "); got != "user reasoning toolCall reasoning assistant turn user assistant turn" {
		t.Errorf("history %s", got)
	}
	if u := rec.usage; len(u) != 3 || u[0].ContextWindow != model.DefaultContextWindow || u[0].ContextTokens == 0 {
		t.Errorf("usage %+v", u)
	}
}

func TestASmallWindowIsCompactedAndTheFullHistoryStays(t *testing.T) {
	svc, m, rec, ws := flowService(t, model.Config{ContextWindow: 2000})
	s, _ := svc.NewSession(SessionOptions{Roots: []string{ws}})
	sid := s.Info.SessionID
	m.Script(modeltest.Reply{Text: []string{strings.Repeat("long answer ", 300)}, Usage: modeltest.Usage{Input: 800, Output: 900}})
	ask(t, svc, rec, sid, TextInput("first question"))
	m.Script(modeltest.Reply{Text: []string{"## Asked\nthe first question"}}, modeltest.Reply{Text: []string{"short"}})
	if d := ask(t, svc, rec, sid, TextInput("second question")); d.Status != TurnCompleted {
		t.Fatalf("%+v", d)
	}
	reqs := m.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[1].Instructions, "compacting your own conversation") ||
		!strings.Contains(reqs[1].LastUserText(), "first question") {
		t.Fatalf("want the summary request second; %d requests", len(reqs))
	}
	next := reqs[2]
	if !strings.Contains(next.Text(), "## Asked\nthe first question") || strings.Contains(next.Text(), "long answer") ||
		next.LastUserText() != "second question" {
		t.Errorf("the request after the compaction:\n%s", next.Text())
	}
	res, _ := svc.Resume(sid, ResumeOptions{})
	var types []string
	for _, h := range res.History {
		types = append(types, h.Type)
	}
	if got := strings.Join(types, " "); got != "user assistant turn user compaction assistant turn" {
		t.Errorf("history %s", got)
	}
	var sources []string
	for _, n := range rec.notices {
		if strings.HasPrefix(n.Source, "compact") {
			sources = append(sources, n.Source)
		}
	}
	if got := strings.Join(sources, " "); got != "compacting compaction" {
		t.Errorf("compaction notices: %s; want one when it starts, one when it is done", got)
	}
	// On request: the turn after the summary is summarised too, in one
	// request; the next request goes on from the new summary.
	m.Script(modeltest.Reply{Text: []string{"## Asked\nboth questions"}}, modeltest.Reply{Text: []string{"ok"}})
	if did, err := svc.Compact(t.Context(), sid, nil); err != nil || !did {
		t.Fatalf("compact: %v %v", did, err)
	}
	if did, err := svc.Compact(t.Context(), sid, nil); err != nil || did {
		t.Errorf("a compaction with nothing new: %v %v", did, err)
	}
	ask(t, svc, rec, sid, TextInput("third"))
	reqs = m.Requests()
	if len(reqs) != 5 || !strings.Contains(reqs[4].Text(), "both questions") || strings.Contains(reqs[4].Text(), "the first question") {
		t.Errorf("after the compaction on request (%d requests):\n%s", len(reqs), reqs[len(reqs)-1].Text())
	}
}

// A turn cancelled before the model answered still says how full the
// conversation is (the editors' gauges read 0 after a cancel).
func TestACancelledTurnReportsHowFullTheConversationIs(t *testing.T) {
	svc, m, rec, ws := flowService(t, model.Config{})
	s, _ := svc.NewSession(SessionOptions{Roots: []string{ws}})
	sid := s.Info.SessionID
	m.Script(modeltest.Reply{Text: []string{"the first answer"}, Usage: modeltest.Usage{Input: 1200, Output: 30}})
	if d := ask(t, svc, rec, sid, TextInput("first")); d.Usage.ContextTokens != 1230 {
		t.Fatalf("first turn %+v", d)
	}
	release := make(chan struct{})
	defer close(release)
	m.Script(modeltest.Reply{Text: []string{"never", " finished"}, Hold: release})
	if _, err := svc.StartTurn(sid, TextInput("second"), nil); err != nil {
		t.Fatal(err)
	}
	m.WaitRequests(2, 10*time.Second)
	svc.CancelTurn(sid)
	d := waitDone(t, rec.events)
	if d.Status != TurnCancelled || d.Usage.ContextTokens <= 0 || d.Usage.ContextWindow != model.DefaultContextWindow {
		t.Errorf("cancelled turn %+v; want kin's estimate of the conversation, not 0", d)
	}
}
