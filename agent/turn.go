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
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
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
	// toolNote names the MCP tools this request defers, deferred are
	// they (see offer).
	toolNote string
	deferred []string
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
	// For a subagent's turn: the parent's turn it works for, and its
	// events (each names the parent). final is the text the turn's
	// latest answer showed, outcome how it ended (what the delegate call
	// reports).
	parent  *turn
	ev      Events
	final   string
	outcome TurnDone
	// ext is what the session's folders bring, as trusted at the turn's
	// start (trusted.go); context is what hooks added for the model in
	// this turn; stops counts Stop hooks that made the model go on.
	ext     brought
	context []string
	stops   int
	// halted says a hook answered continue:false during a call (guarded
	// by mu), haltReason its stopReason: the turn ends after the calls.
	halted     bool
	haltReason string
	// limits is what the person decided of spend limits in this turn
	// (limits.go; guarded by mu).
	limits turnLimits
	// spec is what a special turn (a review) changes: see turnSpec.
	spec turnSpec

	// mu guards saveErr (the answer's pieces are recorded from a timer
	// too), subs, and usage while subagents add to it (they run beside
	// each other).
	mu      sync.Mutex
	saveErr error
	subs    map[string]Subagent // a delegate call's subagent, by call id
	// left counts the calls left open because kin stopped while their
	// MCP task ran (settle): a subagent's turn that left one leaves its
	// delegate call open too.
	left int

	// steer holds the person's words for the next request (steer.go).
	steer steering
}

// saveError is why a turn stopped when its session could not be written.
type saveError struct{ err error }

func (e saveError) Error() string {
	return "kin could not save this session, so the turn stopped and nothing more was sent or run (" + e.err.Error() +
		"); free some disk space (or make KIN_HOME writable) and ask again"
}

func (e saveError) Unwrap() error { return e.err }

func (t *turn) events() Events {
	if t.ev != nil {
		return t.ev
	}
	return t.svc.opts.Events
}

// modelNotice tells the person what the model service said beside its
// answer (a warning of the turn's session): the turn's requests and
// those it sends for compaction and hooks alike.
func (t *turn) modelNotice(msg string) {
	t.events().Notice(Notice{Level: "warning", Message: msg, Source: "model", SessionID: t.sess.id})
}

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
	// What the folders bring is trusted (or not) before anything of it
	// runs or reaches the model; then the session's and the question's
	// hooks.
	// A subagent works under what its parent's turn trusted and started:
	// it asks nothing of its own about the folders, and SessionStart and
	// UserPromptSubmit hooks are the parent's (its calls still meet
	// PreToolUse and PostToolUse).
	if t.parent != nil {
		t.ext = t.parent.ext
	} else {
		t.ext = t.trustProject(ctx)
		if ctx.Err() != nil {
			t.finish(t.stopped())
			return
		}
		t.restoreSkills()
		if !t.startHooks(ctx) {
			return
		}
	}
	// Instructions first: a note that they changed comes before the
	// question it applies to.
	t.refreshInstructions(ctx, t.question.touched)
	if _, ok := t.record(q); !ok {
		t.finish(t.stopped())
		return
	}
	t.awaitArriving(ctx)
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
	specs, tools := t.offer(t.tools())
	if _, why, stopped := t.joinSteers(ctx); stopped {
		return TurnCancelled, fmt.Errorf("a hook stopped the turn: %s", why)
	}
	if len(t.touched) > 0 {
		t.refreshInstructions(ctx, t.touched)
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
		return endedBy(err), err
	}
	t.sess.uniqueCalls(resp.Calls)
	t.calledDeferred(resp.Calls)
	if len(resp.Calls) == 0 {
		if resp.Refused() {
			return TurnRefused, nil
		}
		if t.stopHooks(ctx) {
			return "", nil // a hook sent the model back to work
		}
		// The person's words came while the model answered: the turn goes
		// on for them, unless hooks kept every one of them from the model
		// (then another answer would only repeat this one).
		for !t.steer.closeIfEmpty() {
			joined, why, stopped := t.joinSteers(ctx)
			switch {
			case stopped:
				return TurnCancelled, fmt.Errorf("a hook stopped the turn: %s", why)
			case ctx.Err() != nil:
				return t.stopped()
			case joined > 0:
				return "", nil
			}
		}
		return TurnCompleted, nil
	}
	for i := 0; i < len(resp.Calls); {
		c := resp.Calls[i]
		// The answer's calls after its first are recorded as of the same
		// answer, so they go back to the model together, as it asked.
		same := i > 0
		if t.calls >= t.budget {
			if !t.mayContinue(ctx) {
				if ctx.Err() != nil {
					return t.stopped()
				}
				t.refuse(c, same)
				return TurnLimit, limitError(t.calls)
			}
		}
		n := t.delegations(resp.Calls[i:], tools)
		t.calls += n
		t.callAll(ctx, resp.Calls[i:i+n], tools, same)
		i += n
		if ctx.Err() != nil {
			return t.stopped()
		}
		if reason, ok := t.haltedByHook(); ok {
			return TurnCancelled, fmt.Errorf("a hook stopped the turn: %s", reason)
		}
	}
	return "", nil
}

// finish records how the turn ended, durably, before turn/completed is
// sent. A turn whose session could not be saved ends failed, saying so,
// whatever else happened.
func (t *turn) finish(status string, err error) {
	// what the turn's commands held is removed in the background once
	// each ended (while the model read its result); a turn ends with
	// none of it left in the workspace
	sandbox.Settle()
	t.spendTotals()
	if left := t.steer.close(); len(left) > 0 {
		t.unsent(left)
	}
	t.usage.ContextWindow = t.cfg.Window()
	if t.usage.ContextTokens == 0 {
		// Ended before the model answered (cancelled, failed): the gauge
		// shows how full the conversation is, not 0.
		t.usage.ContextTokens = t.sess.estimate(len(t.instructions), outputBudget(t.cfg.Window()))
	}
	done := TurnDone{SessionID: t.sess.id, TurnID: t.id, Status: status, Usage: t.usage}
	if err != nil {
		done.Error = err.Error()
	}
	rec := session.Record{Type: session.TypeTurn, TurnID: t.id, Status: status, Error: done.Error,
		Usage: &session.Usage{InputTokens: t.usage.InputTokens, OutputTokens: t.usage.OutputTokens,
			ContextTokens: t.usage.ContextTokens, ContextWindow: t.usage.ContextWindow,
			CachedInputTokens: t.usage.CachedInputTokens, Cost: t.usage.Cost, Estimated: t.usage.Estimated, Unpriced: t.usage.Unpriced}}
	written := false
	if t.failedSave() == nil {
		if _, written = t.record(rec); written {
			if err := t.sess.sync(); err != nil {
				t.saveFailed(err)
			}
		}
	}
	// the day's usage, written in the background during the turn (its
	// last write alongside the sync above), is on disk before the turn is
	// said done: nothing of a turn outlives it
	t.svc.spend.day.Wait()
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
	t.outcome = done
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
			Title:   "Acknowledge before your question is sent: " + list + " may already have run",
			Warning: acknowledgement(unknown),
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

// acknowledgement is what the person acknowledges: that kin does not know
// whether these calls took effect, each call as it was made and what kin
// knows of it (the end of its result).
func acknowledgement(unknown []session.Unknown) string {
	var b strings.Builder
	if len(unknown) == 1 {
		b.WriteString("kin does not know whether this call took effect: it was sent or started, and no outcome came back. It will not be run again.")
	} else {
		fmt.Fprintf(&b, "kin does not know whether these %d calls took effect: each was sent or started, and no outcome came back. They will not be run again.", len(unknown))
	}
	b.WriteString(" Acknowledge to send your question; the model is told the same.\n")
	for _, u := range unknown {
		fmt.Fprintf(&b, "\n%s", u.Name)
		if a := strings.TrimSpace(u.Arguments); a != "" && a != "{}" {
			if len(a) > 300 {
				a = strings.ToValidUTF8(a[:300], "") + "…"
			}
			fmt.Fprintf(&b, " %s", a)
		}
		if o := strings.TrimSpace(u.Output); o != "" {
			fmt.Fprintf(&b, "\n  what kin knows: %s", strings.ReplaceAll(o, "\n", "\n  "))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
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
func (t *turn) refuse(c model.Call, same bool) {
	t.record(session.Record{Type: session.TypeCall, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments, Cont: same})
	msg := fmt.Sprintf("not run: the turn reached its limit of %d tool calls", t.calls)
	t.close(session.Record{Type: session.TypeResult, CallID: c.CallID, Name: c.Name, Status: string(tool.StatusFailed), Output: msg})
	t.events().ToolCall(ToolCall{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Name: c.Name, Kind: tool.KindOther,
		Arguments: c.Arguments, Status: string(tool.StatusFailed), Output: msg, Saw: modelSaw(tool.Failed(msg))})
}

// call runs one tool call through the gate; same says it came in the same
// answer as the call before it.
func (t *turn) call(ctx context.Context, c model.Call, tools []tool.Tool, same bool) {
	if p := t.open(c, tools, same); p != nil {
		t.settle(ctx, p)
	}
}

// openCall is a call on record and shown pending, not yet run.
type openCall struct {
	c  model.Call
	tl tool.Tool
	ev ToolCall
}

func (p *openCall) emit(t *turn, status string) {
	p.ev.Status = status
	t.events().ToolCall(p.ev)
}

// open records a call the model asked for and shows it pending. A call
// that could not be recorded is not run (nil): nothing may happen that a
// later kin could not account for.
func (t *turn) open(c model.Call, tools []tool.Tool, same bool) *openCall {
	var tl tool.Tool
	for _, x := range tools {
		if x.Spec().Name == c.Name {
			tl = x
			break
		}
	}
	p := &openCall{c: c, tl: tl, ev: ToolCall{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Name: c.Name, Kind: tool.KindOther, Arguments: c.Arguments}}
	if tl != nil {
		p.ev.Kind = tl.Spec().Kind
	}
	_, saved := t.record(session.Record{Type: session.TypeCall, CallID: c.CallID, Name: c.Name, Kind: p.ev.Kind, Arguments: c.Arguments, Cont: same})
	p.emit(t, CallPending)
	if !saved {
		res := tool.Failed("not run: kin could not save this session")
		p.ev.Output = res.Output
		p.emit(t, string(res.Status))
		return nil
	}
	return p
}

// settle runs an open call and records how it ended.
func (t *turn) settle(ctx context.Context, p *openCall) {
	c := p.c
	emit := func(status string) { p.emit(t, status) }
	res, ran := t.runCall(ctx, p.tl, c, &p.ev, emit)
	if res.Status == tool.StatusCompleted || res.Status == tool.StatusOutputLimit {
		if paths := touchedPaths(string(ran)); len(paths) > 0 {
			t.mu.Lock()
			t.touched = append(t.touched, paths...)
			t.mu.Unlock()
		}
	}
	res = res.CutToMax()
	sub := t.subagentOf(c.CallID)
	if t.leaveOpen(ctx, res) {
		// kin stops while the call's MCP task runs: no result. The task
		// runs on and the call stays open in the log (its task on
		// record), and the next kin, on resume, follows the task and ends
		// the call with its result (session.View.RepairsFollowing).
		p.ev.Subagent, p.ev.StatusMessage = sub, "kin stopped; the task goes on running on the MCP server, and kin follows it again when this session is resumed"
		emit(CallWorking)
		// Left on a question kin withdrew as it began to stop, the turn
		// may not be cancelled yet: it ends now, so no model request
		// ever carries a call without its result.
		t.abort(tool.ErrStopping)
		return
	}
	t.close(session.Record{Type: session.TypeResult, CallID: c.CallID, Name: c.Name, Title: p.ev.Title,
		Status: string(res.Status), Output: res.Output, Content: res.Content, Subagent: subagentRef(sub), Saw: res.Saw, Links: res.Links})
	p.ev.Output, p.ev.Content, p.ev.OutputDelta, p.ev.Subagent = res.Output, res.Content, "", sub
	p.ev.Saw, p.ev.Links = modelSaw(res), res.Links
	emit(string(res.Status))
}

// leaveOpen says whether call result res stays without a result in the
// log: its work goes on elsewhere (tool.Result.Open, an MCP task on
// record) and kin stops. Only where the next kin follows such a call: a
// person's session's call, or a subagent's whose delegate call its parent
// leaves open in turn (subagentResult); a deeper subagent's task is not
// followed after a restart, so its call ends unknown (res as it is).
func (t *turn) leaveOpen(ctx context.Context, res tool.Result) bool {
	if !res.Open || !tool.Stopping(ctx) || t.sess.depth() > 1 || t.failedSave() != nil {
		return false
	}
	t.mu.Lock()
	t.left++
	t.mu.Unlock()
	return true
}

// runCall runs one call through the hooks and the gate; args are the
// arguments it ran with (or would have): the model's, or those the
// person's PreToolUse hook put in their place.
func (t *turn) runCall(ctx context.Context, tl tool.Tool, c model.Call, ev *ToolCall, emit func(string)) (res tool.Result, args json.RawMessage) {
	args = json.RawMessage(c.Arguments)
	if tl == nil {
		return tool.Failed(fmt.Sprintf("there is no tool named %q (it may belong to an MCP server that is not connected)", c.Name)), args
	}
	if len(strings.TrimSpace(c.Arguments)) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		// A tool may read the first JSON value and ignore what follows,
		// but hooks are handed the input as JSON: arguments that are not
		// JSON would fail every PreToolUse hook, and the call would run
		// past a hook that denies it.
		return tool.Failed(fmt.Sprintf("not run: the arguments of %s are not valid JSON (%s); nothing was run or sent. Send one JSON object.",
			c.Name, visible.Clip(c.Arguments, 200))), args
	}
	return t.gateAndRun(ctx, tl, c, args, ev, emit)
}

// gateAndRun is runCall's body: it returns the arguments the call ran
// with, a person's hook's in place of the model's when it changed them.
func (t *turn) gateAndRun(ctx context.Context, tl tool.Tool, c model.Call, args json.RawMessage, ev *ToolCall, emit func(string)) (tool.Result, json.RawMessage) {
	env := t.sess.toolEnv(t.id, c.CallID)
	action, err := tl.Prepare(ctx, env, args)
	if err != nil {
		return tool.Failed(err.Error()), args
	}
	if action.Approval != nil {
		ev.Title, ev.Sandbox = action.Approval.Title, action.Approval.Sandbox
	}
	hv := t.preToolUse(ctx, c, args)
	switch {
	case ctx.Err() != nil:
		return tool.Result{Status: tool.StatusDenied, Output: "The turn was cancelled before the call ran; nothing was run or sent."}, args
	case hv.stop:
		t.haltByHook(hv.stopReason)
		return tool.Result{Status: tool.StatusDenied, Output: "A hook stopped the turn before this call ran; nothing was run or sent. The hook said: " + hv.stopReason}, args
	case hv.deny:
		return tool.Result{Status: tool.StatusDenied, Output: "A hook blocked this call; nothing was run or sent. The hook said: " + hv.reason}, args
	case hv.badInput != "":
		return t.badHookInput(c, hv.updatedBy, hv.badInput), args
	}
	var note string
	if hv.args != nil {
		// The person's hook changed the call: from here on it is the
		// call, prepared by the tool (its argument checks, the boundary's
		// paths, protected files and secrets) and judged by the gate (the
		// mode, the grants, the person) exactly as if the model had sent
		// it. The model's call stays on record as it asked; the result
		// tells it what ran instead (changed), so its history is true.
		changed, err := tl.Prepare(ctx, env, hv.args)
		by := strings.Join(hv.updatedBy, ", ")
		if err != nil {
			return t.badHookInput(c, hv.updatedBy, fmt.Sprintf("an input %s does not take (%v)", c.Name, err)), args
		}
		args, action = hv.args, changed
		ev.Title, ev.Sandbox = "", nil
		if action.Approval != nil {
			ev.Title, ev.Sandbox = action.Approval.Title, action.Approval.Sandbox
		}
		shown := visible.Clip(string(args), 300)
		note = fmt.Sprintf("Your hook %s changed this call; the model asked for %s", by, visible.Clip(c.Arguments, 300))
		if action.Approval != nil {
			action.Approval = withNote(action.Approval, note)
		}
		t.events().Notice(Notice{Level: "info", Source: "hooks", SessionID: t.sess.id,
			Message: fmt.Sprintf("your hook %s changed the input of %s to %s", by, c.Name, shown)})
		prefix := fmt.Sprintf("[kin: the person's hook %s replaced this call's input before kin checked it; what was checked and run: %s]\n", by, shown)
		res := t.gateRun(ctx, tl, c, args, action, hv, note, env, ev, emit)
		res.Output = prefix + res.Output
		return res, args
	}
	return t.gateRun(ctx, tl, c, args, action, hv, note, env, ev, emit), args
}

// badHookInput fails a call whose input the person's hook (the last of
// by) replaced with what cannot run: the person is told, the model reads
// why, nothing runs.
func (t *turn) badHookInput(c model.Call, by []string, why string) tool.Result {
	hook := by[len(by)-1]
	t.events().Notice(Notice{Level: "warning", Source: "hooks", SessionID: t.sess.id,
		Message: fmt.Sprintf("your hook %s gave %s %s, so the call did not run", hook, c.Name, why)})
	return tool.Failed(fmt.Sprintf("not run: the person's hook %s replaced this call's input with %s; nothing was run or sent.", hook, why))
}

// gateRun asks the gate about a prepared call (unless the person's hook
// allowed it and nothing says kin must ask) and runs it when allowed.
func (t *turn) gateRun(ctx context.Context, tl tool.Tool, c model.Call, args json.RawMessage, action *tool.Action, hv hookVerdict, note string,
	env tool.Env, ev *ToolCall, emit func(string)) tool.Result {
	if hv.ask {
		action.Approval = alwaysAsk(action.Approval, c.Name, "A hook asked kin to ask you: "+hv.reason)
	}
	var out permission.Outcome
	answered := action
	if hv.allow && !hv.ask && (action.Approval == nil || !action.Approval.AlwaysAsk) && t.sess.narrowedBy(c.Name) == "" &&
		(t.mode() != permission.ModeAsk || tool.ReadOnly(tl)) {
		out = t.hookAllowed(c, action.Approval, hv.reason)
	} else {
		rv := newReviser(tl, env, args, action)
		if rv != nil {
			rv.note = note
		}
		out, answered = t.permitted(ctx, tl, c, action, rv, emit)
	}
	if answered == nil {
		return tool.Failed("not run: kin does not know which version of the approval was answered")
	}
	action = answered
	if !out.Allowed() {
		switch {
		case out.Reason == permission.ReasonMode:
			ev.Reason = RefusedAskMode
			return tool.Result{Status: tool.StatusDenied, Output: permission.AskModeRefusal}
		case ctx.Err() != nil:
			ev.Reason = RefusedCancelled
			return tool.Result{Status: tool.StatusDenied, Output: "The turn was cancelled before the person decided; nothing was run or sent."}
		}
		ev.Reason = RefusedByPerson
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
	working := func(msg string) {
		e := *ev
		e.Status, e.StatusMessage = CallWorking, msg
		t.events().ToolCall(e)
	}
	ctx = tool.WithTaskRecorder(ctx, func(tk tool.Task) error { return t.recordTask(c.CallID, c.Name, tk) })
	res := action.Run(tool.WithWorking(ctx, working), progress)
	if res.Status == "" {
		res.Status = tool.StatusCompleted
	}
	if res.Open {
		return res // not ended: no PostToolUse (settle)
	}
	t.postToolUse(ctx, c, args, &res)
	return res
}

// permitted asks the gate, the one place that decides (the session's mode,
// the call's needs, the grants, the person). Every decision but "needs
// none" is recorded with what was shown. While the person decides, rv (if
// any) replaces the approval when the file it was made from changes; the
// action returned is the one of the approval the person answered.
func (t *turn) permitted(ctx context.Context, tl tool.Tool, c model.Call, action *tool.Action, rv *reviser, emit func(string)) (permission.Outcome, *tool.Action) {
	ap := action.Approval
	if by := t.sess.narrowedBy(c.Name); by != "" {
		ap = alwaysAsk(ap, c.Name, fmt.Sprintf("%s is not in the allowed-tools of the skill %s, which is loaded: kin asks.", c.Name, by))
		action.Approval = ap
	}
	gate := t.svc.opts.Gate
	if gate == nil {
		if ap == nil {
			return permission.Outcome{Decision: permission.AllowOnce, Reason: permission.ReasonNotNeeded}, action
		}
		return permission.Outcome{Decision: permission.Deny}, action
	}
	out := gate.Decide(ctx, permission.Call{SessionID: t.sess.id, TurnID: t.id, CallID: c.CallID, Mode: t.mode(),
		Roots: t.sess.sessionRoots(), ToolName: c.Name, ToolKind: tl.Spec().Kind, ReadOnly: tool.ReadOnly(tl), Approval: ap,
		Revise: rv.revisions(), Parent: t.sess.parentRef()},
		func() {
			emit(CallAwaitingApproval)
			rv.start(ctx)
		})
	if rv != nil {
		if action = rv.end(out.Revision); action == nil {
			return permission.Outcome{Decision: permission.Deny, Reason: out.Reason}, nil
		}
		ap = action.Approval
	}
	if out.Reason == permission.ReasonNotNeeded {
		return out, action
	}
	rec := session.Record{Type: session.TypeDecision, CallID: c.CallID, RequestID: out.RequestID, ApprovalKind: permission.KindToolCall,
		Decision: out.Decision, Reason: out.Reason}
	if ap != nil {
		rec.Title, rec.Approved = ap.Title, ap
	}
	t.record(rec)
	if ap == nil || out.Reason != permission.ReasonPerson {
		return out, action // a grant or the mode decided: nothing new to keep
	}
	if grant, permanent := out.Grants(); grant && ap.Grant != nil {
		if _, err := gate.Grants().Add(t.sess.grantSession(), *ap.Grant, permanent); err != nil {
			t.events().Notice(Notice{Level: "warning", Message: "could not save the grant: " + err.Error(), SessionID: t.sess.id})
		}
	}
	return out, action
}

// withNote is ap with note added to its warning (a copy: the tool's
// approval is left as it was).
func withNote(ap *tool.Approval, note string) *tool.Approval {
	out := *ap
	out.Warning = strings.TrimSpace(out.Warning + " " + note)
	return &out
}

// alwaysAsk is the approval of a call that must be asked whatever a grant,
// the mode or a hook would do (a loaded skill's allowed-tools leave it
// out; a hook said "ask"), with note saying why.
func alwaysAsk(ap *tool.Approval, toolName, note string) *tool.Approval {
	var out tool.Approval
	if ap != nil {
		out = *ap
	} else {
		out.Title = "Call " + toolName
	}
	out.AlwaysAsk, out.AutoAllow, out.AutoEditAllows, out.Grant = true, false, false, nil
	if out.Warning != "" {
		note = out.Warning + " " + note
	}
	out.Warning = note
	return &out
}

// modelSaw is what the model saw of res: the tool's account (framing,
// structured content, cuts) with the exact text it got.
func modelSaw(res tool.Result) *tool.Saw {
	saw := tool.Saw{}
	if res.Saw != nil {
		saw = *res.Saw
	}
	saw.Text = tool.ModelText(string(res.Status), res.Output)
	return &saw
}
