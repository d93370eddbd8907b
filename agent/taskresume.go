package agent

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// TaskFollower goes on polling an MCP task that a stopped kin left running
// (issue 24 §2): the call that created it ran in an earlier process, and is
// never sent again. The MCP side (mcp/manager) implements it.
type TaskFollower interface {
	// FollowTask polls task taskID on the configured server named server
	// (waiting for it to connect, within its connect timeout) until the
	// task ends, and returns the call's result: the task's, failed when it
	// failed, expired or the server no longer knows it, unknown when the
	// server is gone or the connection went away. name is the call's tool
	// as the model called it; working reports the task's status.
	FollowTask(ctx context.Context, server, taskID, name string, env tool.Env, working func(string)) tool.Result
}

// recordTask records, durably, that call c runs as task taskID on server,
// before anything polls it: a kin that stops now finds the task on resume.
func (t *turn) recordTask(c string, name, server, taskID string) error {
	if _, ok := t.record(session.Record{Type: session.TypeTask, CallID: c, Name: name, Server: server, TaskID: taskID}); !ok {
		return fmt.Errorf("kin could not save this session")
	}
	return t.sess.sync()
}

// closeTasks are the repairs of a session a stopped kin left, and the tasks
// this kin goes on following: with a TaskFollower and a writable log, an
// allowed call with a recorded task stays open until its task ends.
func (s *Service) closeTasks(v *session.View, writable bool) ([]session.Record, []session.OpenTask) {
	// A subagent's session is closed as its parent closes it (the parent's
	// delegate call ends unknown): its tasks are not followed.
	if s.opts.Tasks == nil || s.opts.Events == nil || !writable || v.Parent() != nil {
		return v.Repairs(), nil
	}
	return v.RepairsFollowing()
}

// followTasks follows each task, in the background: the call shows as
// working on its (ended) turn, and its result is recorded and reported as
// the call's final status when the task ends, so the next turn's model
// request carries it.
func (s *Service) followTasks(sess *Session, open []session.OpenTask) {
	for _, ot := range open {
		if _, dup := s.following.LoadOrStore(sess.id+"\x00"+ot.CallID, true); dup {
			continue // this kin already follows it
		}
		go s.followTask(sess, ot)
	}
}

func (s *Service) followTask(sess *Session, ot session.OpenTask) {
	defer s.following.Delete(sess.id + "\x00" + ot.CallID)
	ev := ToolCall{SessionID: sess.id, TurnID: ot.TurnID, CallID: ot.CallID, Name: ot.Name, Kind: tool.KindOther}
	working := func(msg string) {
		e := ev
		e.Status, e.StatusMessage = CallWorking, msg
		s.opts.Events.ToolCall(e)
	}
	working(fmt.Sprintf("kin restarted: following task %s on MCP server %s again (the call is not sent again)", clip(ot.TaskID, 100), ot.Server))
	res := s.opts.Tasks.FollowTask(context.Background(), ot.Server, ot.TaskID, ot.Name, sess.toolEnv(ot.TurnID, ot.CallID), working)
	if res.Status == "" {
		res.Status = tool.StatusCompleted
	}
	res = res.CutToMax()
	r := session.Record{Type: session.TypeResult, TurnID: ot.TurnID, CallID: ot.CallID, Name: ot.Name,
		Status: string(res.Status), Output: res.Output, Content: res.Content, Saw: res.Saw, Links: res.Links}
	if _, err := sess.append(r); err != nil {
		// The log was closed (kin is stopping, or the session went): the
		// call stays open with its task, for the next kin to follow.
		s.log.Warn("the result of a task kin followed after a restart was not recorded",
			zap.String("session", sess.id), zap.String("call", ot.CallID), zap.Error(err))
		return
	}
	if err := sess.sync(); err != nil {
		s.log.Error("session log sync failed", zap.String("session", sess.id), zap.Error(err))
	}
	ev.Status, ev.Output, ev.Content, ev.Saw, ev.Links = string(res.Status), res.Output, res.Content, modelSaw(res), res.Links
	s.opts.Events.ToolCall(ev)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
