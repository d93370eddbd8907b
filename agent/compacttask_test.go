package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// heldFollower follows every task until release is closed, then gives out.
type heldFollower struct {
	release chan struct{}
	out     string
}

func (f heldFollower) FollowTask(ctx context.Context, _ tool.Task, _ string, _ tool.Env, _ func(string)) tool.Result {
	select {
	case <-f.release:
	case <-ctx.Done():
	}
	return tool.Result{Status: tool.StatusCompleted, Output: f.out}
}

// taskStoppedLog is a session a kin stopped in while call j1 ran as an MCP
// task, and two turns since.
var taskStoppedLog = []session.Record{
	{Type: session.TypeUser, TurnID: "t1", Text: "run the job"},
	{Type: session.TypeCall, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Arguments: "{}"},
	{Type: session.TypeDecision, TurnID: "t1", CallID: "j1", Decision: "allow_once"},
	{Type: session.TypeTask, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Server: "jobs", TaskID: "task-1"},
	{Type: session.TypeTurn, TurnID: "t1", Status: "failed", Error: session.StoppedDuringTurn},
	{Type: session.TypeUser, TurnID: "t2", Text: "meanwhile, one"},
	{Type: session.TypeAssist, TurnID: "t2", Text: "ok"},
	{Type: session.TypeTurn, TurnID: "t2", Status: TurnCompleted},
	{Type: session.TypeUser, TurnID: "t3", Text: "meanwhile, two"},
	{Type: session.TypeAssist, TurnID: "t3", Text: "ok"},
	{Type: session.TypeTurn, TurnID: "t3", Status: TurnCompleted},
}

// The attack: kin restarts while a call runs as an MCP task and follows
// it; the person asks for a compaction, and the task ends while the model
// writes the summary. The transcript was taken before the result came, so
// the summary says the job runs; the compaction then dropped the call with
// its output, and the model never learnt what the job gave (no note
// either, since the result had found its call). The call and its output
// are kept after the summary.
func TestATaskResultLandingWhileCompactingReachesTheModel(t *testing.T) {
	home := t.TempDir()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("jobs", []string{t.TempDir()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range taskStoppedLog {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	m := modeltest.New()
	t.Cleanup(m.Close)
	rec := &screen{events: events{done: make(chan TurnDone, 8)}}
	f := heldFollower{release: make(chan struct{}), out: "indexed 2 files"}
	svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
		Tools: tool.Static(builtin.Tools(builtin.Options{})), Events: rec, Tasks: f})
	t.Cleanup(svc.Shutdown)
	sid := info.SessionID
	if _, err := svc.Resume(sid, ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	m.Script(modeltest.Reply{Text: []string{"## Summary\nThe job was started and runs."}, Hold: hold},
		modeltest.Reply{Text: []string{"fine"}})
	done := make(chan error, 1)
	go func() {
		_, err := svc.Compact(t.Context(), sid, nil)
		done <- err
	}()
	m.WaitRequests(1, 10*time.Second) // the summary is being written
	close(f.release)
	for deadline := time.Now().Add(10 * time.Second); ; {
		recs, _ := logRecords(svc.store, sid)
		if r := recs[len(recs)-1]; r.Type == session.TypeResult && r.CallID == "j1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task's result was not recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ask(t, svc, rec, sid, TextInput("what did the job give?"))
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Text(), "The job was started") {
		t.Fatalf("the request does not go on from the summary: %s", last.Text())
	}
	if !strings.Contains(last.Text(), "indexed 2 files") {
		t.Errorf("the task's result, recorded while the summary was written, is not in the next request: %s", last.Text())
	}
}

// A call carried over a compaction is summarised by the next one, not
// carried again for ever.
func TestALateOutputIsCarriedOverOneCompactionOnly(t *testing.T) {
	recs := append(append([]session.Record{}, taskStoppedLog...),
		session.Record{Type: session.TypeResult, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Status: "completed", Output: "indexed 2 files"},
		session.Record{Type: session.TypeCompaction, Text: "the job was started", FromTurn: "t2"})
	has := func(items []model.Item) bool {
		for _, it := range items {
			if it.Kind == model.FunctionOutput && strings.Contains(it.Output, "indexed 2 files") {
				return true
			}
		}
		return false
	}
	items := conversationOf(t, recs)
	if !has(items) || items[0].Role != "developer" || items[1].Kind != model.FunctionCall || items[1].CallID != "j1" {
		t.Fatalf("after the compaction the result landed in, the call and its output are not right after the summary: %+v", items)
	}
	items = conversationOf(t, append(recs, session.Record{Type: session.TypeCompaction, Text: "the job indexed 2 files", FromTurn: "t3"}))
	if has(items) {
		t.Errorf("the next compaction carried the output over again: %+v", items)
	}
}
