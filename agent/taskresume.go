package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
)

// TaskFollower goes on polling an MCP task that a stopped kin left running
// (issue 24 §2): the call that created it ran in an earlier process, and is
// never sent again. The MCP side (mcp/manager) implements it.
type TaskFollower interface {
	// FollowTask polls task tk on the configured server it names, when
	// that name still launches what the call ran on (tk.Launch), else the
	// call is unknown
	// (waiting for it to connect, within its connect timeout) until the
	// task ends, and returns the call's result: the task's, failed when it
	// failed, expired or the server no longer knows it, unknown when the
	// server is gone or the connection went away. name is the call's tool
	// as the model called it; working reports the task's status.
	FollowTask(ctx context.Context, tk tool.Task, name string, env tool.Env, working func(string)) tool.Result
}

// recordTask records, durably, that call c runs as task tk, before
// anything polls it: a kin that stops now finds the task on resume.
func (t *turn) recordTask(c string, name string, tk tool.Task) error {
	if _, ok := t.record(session.Record{Type: session.TypeTask, CallID: c, Name: name, Server: tk.Server, Launch: tk.Launch, TaskID: tk.ID}); !ok {
		return fmt.Errorf("kin could not save this session")
	}
	return t.sess.sync()
}

// closeTasks are the repairs of a session a stopped kin left, and the tasks
// this kin goes on following: with a TaskFollower and a writable log, an
// allowed call with a recorded task stays open until its task ends.
func (s *Service) closeTasks(v *session.View, writable bool) ([]session.Record, []session.OpenTask) {
	if !s.followsTasks(v, writable) {
		return v.Repairs(), nil
	}
	return v.RepairsFollowing()
}

// followsTasks says whether this kin follows the tasks of the session v,
// and of its subagents. A subagent's session is closed as its parent
// closes it: its tasks are followed when the parent is resumed (its
// delegate call waits on them, see followChild), not on its own.
func (s *Service) followsTasks(v *session.View, writable bool) bool {
	return s.opts.Tasks != nil && s.opts.Events != nil && writable && v.Parent() == nil
}

// followTasks follows each task, in the background: the call shows as
// working on its (ended) turn, and its result is recorded and reported as
// the call's final status when the task ends, so the next turn's model
// request carries it.
func (s *Service) followTasks(sess *Session, open []session.OpenTask) {
	for _, ot := range open {
		ctx, ok := s.startFollowing(sess.id, ot.CallID)
		if !ok {
			continue // this kin already follows it
		}
		go s.followTask(ctx, sess, ot)
	}
}

// startFollowing marks the call as followed by this kin, with the context
// its following runs under: ended when the session is deleted
// (stopFollowing), and saying when kin begins to stop (tool.Stopping), so
// a task question withdrawn then leaves the task running, as in a turn.
// ok is false when this kin follows it already.
func (s *Service) startFollowing(sessionID, callID string) (context.Context, bool) {
	ctx, cancel := context.WithCancel(tool.WithStopping(context.Background(), s.stopping.Load))
	if _, dup := s.following.LoadOrStore(followKey(sessionID, callID), context.CancelFunc(cancel)); dup {
		cancel()
		return nil, false
	}
	return ctx, true
}

// doneFollowing ends what startFollowing began.
func (s *Service) doneFollowing(sessionID, callID string) {
	if v, ok := s.following.LoadAndDelete(followKey(sessionID, callID)); ok {
		v.(context.CancelFunc)()
	}
}

// stopFollowing stops following every task of session id: it was deleted.
// Following a task ends as a cancelled call's does (tasks/cancel is sent):
// a deleted session's task asks the person nothing more, and its result
// has no log to go to.
func (s *Service) stopFollowing(id string) {
	s.following.Range(func(k, v any) bool {
		if strings.HasPrefix(k.(string), id+"\x00") {
			v.(context.CancelFunc)()
		}
		return true
	})
}

func (s *Service) followTask(ctx context.Context, sess *Session, ot session.OpenTask) {
	defer s.doneFollowing(sess.id, ot.CallID)
	ev := ToolCall{SessionID: sess.id, TurnID: ot.TurnID, CallID: ot.CallID, Name: ot.Name, Kind: tool.KindOther}
	working := s.reportsWorking(ev)
	working(fmt.Sprintf("kin restarted: following task %s on MCP server %s again (the call is not sent again)", visible.Cut(ot.TaskID, 100), ot.Server))
	res, r := s.taskResult(ctx, ot, sess.toolEnv(ot.TurnID, ot.CallID), working)
	if ctx.Err() != nil {
		return // the session was deleted
	}
	if res.Open {
		return // kin stops and left the task running: the call stays open for the next kin
	}
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

// followsAny reports whether this kin follows a task of session id.
func (s *Service) followsAny(id string) bool {
	found := false
	s.following.Range(func(k, _ any) bool {
		found = strings.HasPrefix(k.(string), id+"\x00")
		return !found
	})
	return found
}

// followKey names a call this kin follows (Service.following): one
// follower a call, whichever way it was found.
func followKey(sessionID, callID string) string { return sessionID + "\x00" + callID }

// reportsWorking reports ev as working with a status message.
func (s *Service) reportsWorking(ev ToolCall) func(msg string) {
	return func(msg string) {
		e := ev
		e.Status, e.StatusMessage = CallWorking, msg
		s.opts.Events.ToolCall(e)
	}
}

// taskResult follows task ot to its end (working reports its statuses;
// env is the call's whose questions the task asks) and is its result, cut
// to size, with the record that closes ot's call in its log.
func (s *Service) taskResult(ctx context.Context, ot session.OpenTask, env tool.Env, working func(string)) (tool.Result, session.Record) {
	res := s.opts.Tasks.FollowTask(ctx, tool.Task{Server: ot.Server, Launch: ot.Launch, ID: ot.TaskID}, ot.Name, env, working)
	if res.Status == "" {
		res.Status = tool.StatusCompleted
	}
	res = res.CutToMax()
	return res, session.Record{Type: session.TypeResult, TurnID: ot.TurnID, CallID: ot.CallID, Name: ot.Name,
		Status: string(res.Status), Output: res.Output, Content: res.Content, Saw: res.Saw, Links: res.Links}
}

// followChildren follows, in the background, the tasks each subagent a
// stopped kin left had running; its delegate call shows as working on the
// parent's (ended) turn until they end, then ends with what they gave.
func (s *Service) followChildren(sess *Session, waiting []childTasks) {
	for _, c := range waiting {
		if c.log == nil {
			continue
		}
		ctx, ok := s.startFollowing(sess.id, c.call.CallID)
		if !ok {
			c.log.Close()
			continue
		}
		go s.followChild(ctx, sess, c)
	}
}

// followChild follows the tasks of subagent c one after the other: each
// task's result closes its call in the subagent's log. The subagent's turn
// cannot go on (kin never takes a model turn up again after a restart), so
// it gives no answer: the delegate call ends failed with what its tasks
// gave, or unknown when one of the subagent's calls has an unknown outcome
// (it may have changed things).
func (s *Service) followChild(ctx context.Context, sess *Session, c childTasks) {
	defer s.doneFollowing(sess.id, c.call.CallID)
	closed := false
	closeLog := func() {
		if !closed {
			closed = true
			c.log.Close()
		}
	}
	defer closeLog()
	ev := ToolCall{SessionID: sess.id, TurnID: c.call.TurnID, CallID: c.call.CallID, Name: DelegateToolName, Kind: tool.KindOther,
		Subagent: &Subagent{SessionID: c.child, Mode: permission.Mode(c.mode)}}
	working := s.reportsWorking(ev)
	var b strings.Builder
	fmt.Fprintf(&b, "kin stopped while this subagent (session %s) ran in %s mode, and it gave no answer. After the restart kin followed the MCP tasks it had left running (the calls were not sent again):", c.child, c.mode)
	unknown := c.unknown
	for _, ot := range c.tasks {
		working(fmt.Sprintf("kin restarted: following task %s of the subagent's call %s on MCP server %s again (the call is not sent again)", visible.Cut(ot.TaskID, 100), ot.Name, ot.Server))
		// Its questions are asked on the delegate call: the subagent's
		// session is not loaded, and the delegate call is what the person
		// sees waiting.
		res, r := s.taskResult(ctx, ot, sess.toolEnv(c.call.TurnID, c.call.CallID), working)
		if ctx.Err() != nil {
			return // the session was deleted
		}
		if res.Open {
			// kin stops and left the task running: its call and the
			// delegate call stay open, for the next kin to follow.
			return
		}
		r.Time = time.Now().UTC()
		if _, _, err := c.log.Append(session.Fit(r)); err != nil {
			// The call stays open with its task, and so does the delegate
			// call: the next kin follows them again.
			s.log.Warn("the result of a subagent's task kin followed after a restart was not recorded",
				zap.String("session", c.child), zap.String("call", ot.CallID), zap.Error(err))
			return
		}
		if res.Status == tool.StatusUnknown {
			unknown = append(unknown, ot.Name)
		}
		fmt.Fprintf(&b, "\n- %s ended %s: %s", ot.Name, res.Status, visible.Cut(res.Output, 4000))
	}
	if err := c.log.Sync(); err != nil {
		s.log.Error("session log sync failed", zap.String("session", c.child), zap.Error(err))
	}
	closeLog()
	status := tool.StatusFailed
	if len(unknown) > 0 && c.mode != string(permission.ModeAsk) {
		status = tool.StatusUnknown
		fmt.Fprintf(&b, "\nThe outcome of its calls %s is unknown: they may have happened, and must not be retried automatically.", strings.Join(unknown, ", "))
	}
	r := c.call
	r.Time, r.Status, r.Output, r.Content = time.Time{}, string(status), b.String(), []tool.Content{{Type: "text", Text: b.String()}}
	if _, err := sess.append(r); err != nil {
		s.log.Warn("the result of a delegate call whose subagent's tasks kin followed after a restart was not recorded",
			zap.String("session", sess.id), zap.String("call", r.CallID), zap.Error(err))
		return
	}
	if err := sess.sync(); err != nil {
		s.log.Error("session log sync failed", zap.String("session", sess.id), zap.Error(err))
	}
	ev.Status, ev.Output, ev.Content = r.Status, r.Output, r.Content
	s.opts.Events.ToolCall(ev)
}
