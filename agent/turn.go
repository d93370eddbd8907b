package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// turn is one question and everything the model does to answer it.
type turn struct {
	svc      *Service
	sess     *Session
	id       string
	question question
	// cfg and client are the model the turn talks to, effort its effort;
	// fellBack names the session's model when kin no longer has it.
	cfg      model.Config
	client   *model.Client
	effort   string
	fellBack string
	usage    Usage
	calls    int
	answer   *answer
	// instructions are the request's instructions; touched are paths the
	// turn's calls touched since they were last looked at (their
	// directories' instructions may apply).
	instructions string
	touched      []string
	// compacted says a compaction ran for this turn's latest request, so
	// an overflow is not met by another.
	compacted bool
	// abort stops the turn with a cause (a failed save).
	abort context.CancelCauseFunc
	// release marks the session idle. It runs before turn/completed is
	// sent, so an editor may start the next turn as soon as it sees it.
	release func()
	// budget is how many calls the turn may make before it asks to go on.
	budget int

	// mu guards saveErr: the answer's pieces are recorded from a timer too.
	mu      sync.Mutex
	saveErr error
}

// saveError is why a turn stopped when its session could not be written.
type saveError struct{ err error }

func (e saveError) Error() string {
	return "kin could not save this session, so the turn stopped and nothing more was sent or run (" + e.err.Error() +
		"); free some disk space (or make KIN_HOME writable) and ask again"
}

func (e saveError) Unwrap() error { return e.err }

func (t *turn) events() Events { return t.svc.opts.Events }

// record appends a record of this turn. After a failed save the turn writes
// nothing more (a closing record is owed instead, see owe), so the log never
// holds half of what happened after the failure.
func (t *turn) record(r session.Record) (session.Record, bool) {
	r.TurnID = t.id
	if t.failedSave() != nil {
		return r, false
	}
	r, err := t.sess.append(r)
	if err != nil {
		t.saveFailed(err)
		return r, false
	}
	return r, true
}

// close records a record that closes a call or the turn, owing it when it
// cannot be written now.
func (t *turn) close(r session.Record) {
	r.TurnID = t.id
	if _, ok := t.record(r); !ok {
		t.sess.owe(r)
	}
}

func (t *turn) failedSave() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.saveErr
}

// saveFailed stops the turn the first time its session cannot be written,
// and tells the person at once.
func (t *turn) saveFailed(err error) {
	t.mu.Lock()
	first := t.saveErr == nil
	if first {
		t.saveErr = saveError{err}
	}
	se := t.saveErr
	t.mu.Unlock()
	if !first {
		return
	}
	t.svc.log.Error("session log write failed", zap.String("session", t.sess.id), zap.String("turn", t.id), zap.Error(err))
	t.events().Notice(Notice{Level: "error", Message: se.Error(), Source: "session", SessionID: t.sess.id})
	t.abort(se)
}

// stopped is how a turn whose context ended ends: failed when a save
// failed, cancelled otherwise.
func (t *turn) stopped() (string, error) {
	if err := t.failedSave(); err != nil {
		return TurnFailed, err
	}
	return TurnCancelled, nil
}

func (t *turn) run(ctx context.Context) {
	q := t.question.rec
	t.events().TurnStarted(TurnStarted{SessionID: t.sess.id, TurnID: t.id, Input: q.Text, Parts: session.AttachedParts(q.Parts)})
	if _, err := t.sess.conversation(); err != nil {
		t.finish(TurnFailed, fmt.Errorf("reading the session log: %w", err))
		return
	}
	if !t.acknowledgeUnknown(ctx) {
		return
	}
	t.nameSession()
	t.fallBack()
	// Instructions first: a note that they changed comes before the
	// question it applies to.
	t.refreshInstructions(t.question.touched)
	if _, ok := t.record(q); !ok {
		t.finish(t.stopped())
		return
	}
	for {
		status, err := t.step(ctx)
		if status == "" {
			continue
		}
		t.finish(status, err)
		return
	}
}

// step makes one model request and runs the calls it returns. It returns ""
// when the loop should go on, or how the turn ended.
func (t *turn) step(ctx context.Context) (string, error) {
	tools := t.tools()
	mode := t.sess.currentMode()
	specs := make([]tool.Spec, 0, len(tools))
	for _, tl := range tools {
		if mode == permission.ModeAsk && !tool.ReadOnly(tl) {
			continue // not offered; a forced call is still refused by the gate
		}
		specs = append(specs, tl.Spec())
	}
	if len(t.touched) > 0 {
		t.refreshInstructions(t.touched)
		t.touched = nil
	}
	t.compacted = false
	if t.sess.estimate(len(t.instructions), outputBudget(t.cfg.Window())) > int64(t.svc.models.Threshold()*float64(t.cfg.Window())) {
		t.compact(ctx, CompactAuto)
	}
	if ctx.Err() != nil {
		return t.stopped()
	}
	resp, err := t.request(ctx, specs)
	if model.IsOverflow(err) && !t.compacted && ctx.Err() == nil {
		// The service refused the request as too long, so nothing ran:
		// compact, and send the shorter conversation as a new request.
		if t.compact(ctx, CompactOverflow) {
			resp, err = t.request(ctx, specs)
		}
	}
	if ctx.Err() != nil {
		return t.stopped()
	}
	if err != nil {
		return TurnFailed, err
	}
	if len(resp.Calls) == 0 {
		return TurnCompleted, nil
	}
	for _, c := range resp.Calls {
		if t.calls >= t.budget {
			if !t.mayContinue(ctx) {
				if ctx.Err() != nil {
					return t.stopped()
				}
				t.refuse(c)
				return TurnLimit, limitError(t.calls)
			}
		}
		t.calls++
		t.call(ctx, c, tools)
		if ctx.Err() != nil {
			return t.stopped()
		}
	}
	return "", nil
}

// finish records how the turn ended, durably, before turn/completed is
// sent. A turn whose session could not be saved ends failed, saying so,
// whatever else happened.
func (t *turn) finish(status string, err error) {
	t.usage.ContextWindow = t.cfg.Window()
	done := TurnDone{SessionID: t.sess.id, TurnID: t.id, Status: status, Usage: t.usage}
	if err != nil {
		done.Error = err.Error()
	}
	rec := session.Record{Type: session.TypeTurn, TurnID: t.id, Status: status, Error: done.Error,
		Usage: &session.Usage{InputTokens: t.usage.InputTokens, OutputTokens: t.usage.OutputTokens,
			ContextTokens: t.usage.ContextTokens, ContextWindow: t.usage.ContextWindow}}
	written := false
	if t.failedSave() == nil {
		if _, written = t.record(rec); written {
			if err := t.sess.sync(); err != nil {
				t.saveFailed(err)
			}
		}
	}
	if se := t.failedSave(); se != nil {
		if done.Error != "" && done.Error != se.Error() {
			done.Error += "; " + se.Error()
		} else {
			done.Error = se.Error()
		}
		done.Status = TurnFailed
		if !written {
			rec.Status, rec.Error = done.Status, done.Error
			t.sess.owe(rec)
		}
	}
	if done.Status == TurnFailed {
		t.svc.log.Warn("turn failed", zap.String("session", t.sess.id), zap.String("turn", t.id), zap.String("error", done.Error))
	}
	t.release()
	t.events().TurnDone(done)
}

// acknowledgeUnknown enforces the rule that a call whose outcome is unknown
// must be acknowledged before the next question reaches the model. It
// reports whether the turn may go on.
func (t *turn) acknowledgeUnknown(ctx context.Context) bool {
	unknown := t.sess.pendingUnknown()
	if len(unknown) == 0 {
		return true
	}
	names := make([]string, 0, len(unknown))
	for _, u := range unknown {
		names = append(names, u.Name)
	}
	list := strings.Join(names, ", ")
	req := permission.Request{
		SessionID: t.sess.id, TurnID: t.id, CallID: unknown[len(unknown)-1].CallID,
		Kind: permission.KindAcknowledge, ToolName: list,
		Approval: tool.Approval{
			Title:   list + " may already have run",
			Warning: "The outcome of " + list + " is unknown: it may have happened. It will not be retried. Acknowledge to send your next question.",
		},
	}
	out := t.svc.opts.Gate.Ask(ctx, req)
	t.record(session.Record{Type: session.TypeDecision, CallID: req.CallID, RequestID: out.RequestID,
		ApprovalKind: req.Kind, Decision: out.Decision, Reason: out.Reason, Title: req.Title, Approved: &req.Approval})
	if !out.Allowed() {
		t.finish(TurnCancelled, fmt.Errorf("your question was not sent: first acknowledge that %s may already have run", list))
		return false
	}
	if _, ok := t.record(session.Record{Type: session.TypeAck, Text: list}); !ok {
		t.finish(t.stopped())
		return false
	}
	return true
}

// nameSession names an unnamed session after its first question (once the
// name is on record: a name that could not be saved is tried again).
func (t *turn) nameSession() {
	t.sess.mu.Lock()
	named := t.sess.title != ""
	t.sess.mu.Unlock()
	if named {
		return
	}
	text := t.question.rec.Text
	if text == "" {
		text = "(attachments)"
	}
	if r, ok := t.record(session.Record{Type: session.TypeTitle, Title: titleFrom(text)}); ok {
		t.sess.mu.Lock()
		t.sess.title = r.Title
		t.sess.mu.Unlock()
	}
}

// titleFrom names a session after its first question's first paragraph:
// what follows a blank line may be a file the person attached, which
// must not become the name every list shows.
func titleFrom(input string) string {
	first := strings.TrimSpace(input)
	if i := strings.Index(first, "\n\n"); i > 0 {
		first = first[:i]
	}
	s := strings.Join(strings.Fields(first), " ")
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:60]) + "…"
	}
	return s
}

// refuse records a call the model asked for beyond the turn's limit, so the
// conversation stays well formed.
func (t *turn) refuse(c model.Call) {
	t.record(session.Record{Type: session.TypeCall, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments})
	msg := fmt.Sprintf("not run: the turn reached its limit of %d tool calls", t.calls)
	t.close(session.Record{Type: session.TypeResult, CallID: c.CallID, Name: c.Name, Status: string(tool.StatusFailed), Output: msg})
	t.events().ToolCall(ToolCall{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Name: c.Name, Kind: tool.KindOther,
		Arguments: c.Arguments, Status: string(tool.StatusFailed), Output: msg})
}

// call runs one tool call through the gate.
func (t *turn) call(ctx context.Context, c model.Call, tools []tool.Tool) {
	var tl tool.Tool
	for _, x := range tools {
		if x.Spec().Name == c.Name {
			tl = x
			break
		}
	}
	ev := ToolCall{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Name: c.Name, Kind: tool.KindOther, Arguments: c.Arguments}
	if tl != nil {
		ev.Kind = tl.Spec().Kind
	}
	emit := func(status string) {
		ev.Status = status
		t.events().ToolCall(ev)
	}
	_, saved := t.record(session.Record{Type: session.TypeCall, CallID: c.CallID, Name: c.Name, Kind: ev.Kind, Arguments: c.Arguments})
	emit(CallPending)
	if !saved {
		// Not on record, so not run: nothing may happen that a later kin
		// could not account for.
		res := tool.Failed("not run: kin could not save this session")
		ev.Output = res.Output
		emit(string(res.Status))
		return
	}

	res := t.runCall(ctx, tl, c, &ev, emit)
	if res.Status == tool.StatusCompleted || res.Status == tool.StatusOutputLimit {
		t.touched = append(t.touched, touchedPaths(c.Arguments)...)
	}
	if len(res.Output) > tool.MaxOutput {
		res.Output, _ = tool.Head(res.Output, tool.MaxOutput)
		if res.Status == tool.StatusCompleted {
			res.Status = tool.StatusOutputLimit
		}
	}
	t.close(session.Record{Type: session.TypeResult, CallID: c.CallID, Name: c.Name, Title: ev.Title,
		Status: string(res.Status), Output: res.Output, Content: res.Content})
	ev.Output, ev.Content, ev.OutputDelta = res.Output, res.Content, ""
	emit(string(res.Status))
}

func (t *turn) runCall(ctx context.Context, tl tool.Tool, c model.Call, ev *ToolCall, emit func(string)) tool.Result {
	if tl == nil {
		return tool.Failed(fmt.Sprintf("there is no tool named %q (it may belong to an MCP server that is not connected)", c.Name))
	}
	args := json.RawMessage(c.Arguments)
	if len(strings.TrimSpace(c.Arguments)) == 0 {
		args = json.RawMessage("{}")
	}
	env := tool.Env{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Roots: t.sess.sessionRoots(), Files: t.svc.Files(t.sess.id)}
	action, err := tl.Prepare(ctx, env, args)
	if err != nil {
		return tool.Failed(err.Error())
	}
	if action.Approval != nil {
		ev.Title, ev.Sandbox = action.Approval.Title, action.Approval.Sandbox
	}
	if out := t.permitted(ctx, tl, c, action.Approval, emit); !out.Allowed() {
		switch {
		case out.Reason == permission.ReasonMode:
			return tool.Result{Status: tool.StatusDenied, Output: "Refused: the session is in ask mode, where nothing may change; nothing was run or sent. Only tools that change nothing can be used; the person can switch the mode if they want changes."}
		case ctx.Err() != nil:
			return tool.Result{Status: tool.StatusDenied, Output: "The turn was cancelled before the person decided; nothing was run or sent."}
		}
		return tool.Result{Status: tool.StatusDenied, Output: "The person denied this call; nothing was run or sent. Do not try to achieve the same effect another way without asking."}
	}
	// The call's record (and the decision that allowed it) must be durable
	// before it runs: a kin that stops now leaves an outcome the next one
	// reports as unknown, never a call nobody knows about.
	if err := t.failedSave(); err != nil {
		return tool.Failed("not run: kin could not save this session")
	}
	if err := t.sess.sync(); err != nil {
		t.saveFailed(err)
		return tool.Failed("not run: kin could not save this session")
	}
	t.untracked(tl, c, action.Approval)
	emit(CallRunning)
	progress := func(chunk string) {
		e := *ev
		e.Status, e.OutputDelta = CallRunning, chunk
		t.events().ToolCall(e)
	}
	res := action.Run(ctx, progress)
	if res.Status == "" {
		res.Status = tool.StatusCompleted
	}
	return res
}

// permitted asks the gate, the one place that decides (the session's mode,
// the call's needs, the grants, the person). Every decision but "needs
// none" is recorded with what was shown.
func (t *turn) permitted(ctx context.Context, tl tool.Tool, c model.Call, ap *tool.Approval, emit func(string)) permission.Outcome {
	gate := t.svc.opts.Gate
	if gate == nil {
		if ap == nil {
			return permission.Outcome{Decision: permission.AllowOnce, Reason: permission.ReasonNotNeeded}
		}
		return permission.Outcome{Decision: permission.Deny}
	}
	out := gate.Decide(ctx, permission.Call{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Mode: t.sess.currentMode(),
		Roots: t.sess.sessionRoots(), ToolName: c.Name, ToolKind: tl.Spec().Kind, ReadOnly: tool.ReadOnly(tl), Approval: ap},
		func() { emit(CallAwaitingApproval) })
	if out.Reason == permission.ReasonNotNeeded {
		return out
	}
	rec := session.Record{Type: session.TypeDecision, CallID: c.CallID, RequestID: out.RequestID, ApprovalKind: permission.KindToolCall,
		Decision: out.Decision, Reason: out.Reason}
	if ap != nil {
		rec.Title, rec.Approved = ap.Title, ap
	}
	t.record(rec)
	if ap == nil || out.Reason != permission.ReasonPerson {
		return out // a grant or the mode decided: nothing new to keep
	}
	if grant, permanent := out.Grants(); grant && ap.Grant != nil {
		if _, err := gate.Grants().Add(t.sess.id, *ap.Grant, permanent); err != nil {
			t.events().Notice(Notice{Level: "warning", Message: "could not save the grant: " + err.Error(), SessionID: t.sess.id})
		}
	}
	return out
}
