package agent

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// withdrawnFollower follows a task that waits on a question until the
// question is withdrawn, and ends as calltool's follow does then: left
// running (Open) when kin stops, else declined.
type withdrawnFollower struct {
	started  chan context.Context
	withdraw chan struct{}
}

func (f withdrawnFollower) FollowTask(ctx context.Context, _ tool.Task, _ string, _ tool.Env, _ func(string)) tool.Result {
	f.started <- ctx
	<-f.withdraw
	if tool.Stopping(ctx) {
		return tool.Result{Status: tool.StatusUnknown, Output: "left running", Open: true}
	}
	return tool.Result{Status: tool.StatusDenied, Output: "the person declined the question the task asked"}
}

// Attack: kin restarts and follows a task a stopped kin left running; the
// task asks the person something, and the editor goes away. The front end
// marks kin stopping (Service.Stopping) and then withdraws the question; a
// follower whose context did not carry kin's stopping took that for the
// person declining, sent tasks/cancel and closed the call, as ca7d9b3
// fixed for a turn's calls. The followed task's context says kin stops,
// and a task so left keeps its call open for the next kin.
func TestAFollowedTaskSeesKinStopping(t *testing.T) {
	t.Run("call", func(t *testing.T) { followedTaskStops(t, false) })
	t.Run("subagent's call", func(t *testing.T) { followedTaskStops(t, true) })
}

// followedTaskStops: with sub, the task is a subagent's call's, followed
// through its delegate call d1, which stays open too.
func followedTaskStops(t *testing.T, sub bool) {
	home := t.TempDir()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("jobs", []string{t.TempDir()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	parent := taskStoppedLog
	if sub {
		parent = []session.Record{
			{Type: session.TypeUser, TurnID: "t1", Text: "run the job through a subagent"},
			{Type: session.TypeCall, TurnID: "t1", CallID: "d1", Name: DelegateToolName, Arguments: `{"task":"run the job"}`},
			{Type: session.TypeDecision, TurnID: "t1", CallID: "d1", Decision: "allow_once"},
			{Type: session.TypeTurn, TurnID: "t1", Status: "failed", Error: session.StoppedDuringTurn},
		}
	}
	for _, r := range parent {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	recs := func(id string) []session.Record {
		rs, err := logRecords(st, id)
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	logs := []string{info.SessionID}
	if sub {
		ci, clog, err := st.CreateChild("child", nil, "agent", session.Lineage{SessionID: info.SessionID, TurnID: "t1", CallID: "d1", Depth: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range taskStoppedLog[:5] {
			if _, _, err := clog.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		clog.Close()
		logs = append(logs, ci.SessionID)
	}
	m := modeltest.New()
	t.Cleanup(m.Close)
	rec := &screen{events: events{done: make(chan TurnDone, 8)}}
	f := withdrawnFollower{started: make(chan context.Context, 1), withdraw: make(chan struct{})}
	svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: m.URL(), Model: "mock"},
		Tools: tool.Static(builtin.Tools(builtin.Options{})), Events: rec, Tasks: f})
	t.Cleanup(svc.Shutdown)
	if _, err := svc.Resume(info.SessionID, ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	var ctx context.Context
	select {
	case ctx = <-f.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the task was not followed")
	}
	if tool.Stopping(ctx) {
		t.Fatal("kin stops before it began to")
	}
	svc.Stopping()
	if !tool.Stopping(ctx) {
		t.Error("kin began to stop, and the followed task's context does not say so: a question withdrawn now is taken for the person declining")
	}
	close(f.withdraw)
	for deadline := time.Now().Add(30 * time.Second); svc.followsAny(info.SessionID); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the follower did not end")
		}
	}
	for _, id := range logs {
		for _, r := range recs(id) {
			if r.Type == session.TypeResult {
				t.Errorf("the call %s whose task kin left running was closed %s in %s: %q", r.CallID, r.Status, id, r.Output)
			}
		}
	}
}
