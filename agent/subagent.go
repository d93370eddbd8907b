package agent

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/files"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/spend"
	"github.com/kin-dev/kin/agent/tool"
)

// Subagent defaults (settings.json "subagents").
const (
	DefaultMaxSubagents  = 3 // running at once in one kin
	DefaultSubagentDepth = 1 // a person's sessions delegate; subagents do not
)

// subagentConfig is the settings of the delegate tool, read once.
type subagentConfig struct {
	model    string // "" : the parent's
	maxDepth int
}

func newSubagentConfig(st settings.Subagents) (subagentConfig, *slots) {
	c := subagentConfig{model: st.Model, maxDepth: st.MaxDepth}
	if c.maxDepth <= 0 {
		c.maxDepth = DefaultSubagentDepth
	}
	n := st.MaxRunning
	if n <= 0 {
		n = DefaultMaxSubagents
	}
	return c, newSlots(n)
}

// slots bound how many subagents run at once in one kin.
type slots struct {
	max int
	ch  chan struct{}
}

func newSlots(n int) *slots { return &slots{max: n, ch: make(chan struct{}, n)} }

// take takes a free slot, if there is one now.
func (s *slots) take() (release func(), ok bool) {
	select {
	case s.ch <- struct{}{}:
		return s.release, true
	default:
		return nil, false
	}
}

// wait takes the next free slot (in the order the waits began), or gives
// up when ctx ends.
func (s *slots) wait(ctx context.Context) (release func(), err error) {
	select {
	case s.ch <- struct{}{}:
		return s.release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *slots) release() { <-s.ch }

// subagentReadOnly is why a subagent's session takes no turn, mode or
// model change of its own: it did one task for its parent, whose
// conversation holds the result.
type subagentReadOnly struct{ parent string }

func (e subagentReadOnly) Error() string {
	return "this is a subagent's session: it did one task for session " + e.parent + " and is read-only; ask in that session"
}

func (e subagentReadOnly) Unwrap() error { return ErrSessionReadOnly }

// subagentNote tells a subagent what it is, after kin's prompt.
const subagentNote = " You are a subagent: another kin session gave you the task in the question, and your final answer goes back to it as the result of its delegate call, not to the person. Do the task, then answer with everything that session asked for, complete and concise. You cannot ask the person questions; each change or command you make is still asked of the person."

// parentRef is, for a subagent's session, the session, turn and call it
// works for (zero otherwise).
func (sess *Session) parentRef() Parent {
	// the parent is read under the lock and asked without it, as
	// currentMode does: no session's lock is held while another's is taken
	sess.mu.Lock()
	lin, parent := sess.lineage, sess.parent
	sess.mu.Unlock()
	if lin == nil {
		return Parent{}
	}
	p := Parent{SessionID: lin.SessionID, TurnID: lin.TurnID, CallID: lin.CallID}
	if parent != nil {
		// the sessions above, while they run here (a grandchild's
		// question is the person's session's too; its grants are that
		// session's)
		p.Above = parent.parentRef().Sessions()
	}
	return p
}

// depth is how deep the session is nested: 0 for a person's session.
func (sess *Session) depth() int {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.lineage == nil {
		return 0
	}
	return sess.lineage.Depth
}

// grantSession is the session whose grants answer the session's calls and
// keep "always allow in this session": for a subagent's, the person's
// session it works for (permission.Call.GrantSession).
func (sess *Session) grantSession() string {
	if r := sess.parentRef().Root(); r != "" {
		return r
	}
	return sess.id
}

// frontID is the session the front end knows the session's work by: its
// own, or for a running subagent its parent's (an ACP client serves files
// and its MCP servers per session, and knows nothing of subagents).
func (sess *Session) frontID() string {
	sess.mu.Lock()
	parent := sess.parent
	sess.mu.Unlock()
	if parent != nil {
		return parent.frontID()
	}
	return sess.id
}

// files is how the session's tools read and write files. A running
// subagent's go through its parent's, and keep their checkpoints as the
// parent's delegate call's: undoing the parent's turn undoes what its
// subagents changed too.
func (sess *Session) files() files.Access {
	sess.mu.Lock()
	parent, lin := sess.parent, sess.lineage
	sess.mu.Unlock()
	if parent == nil || lin == nil {
		return sess.svc.Files(sess.id)
	}
	return asParentCall{Access: parent.files(), sessionID: parent.id, turnID: lin.TurnID, callID: lin.CallID}
}

// asParentCall writes as a subagent's parent's delegate call.
type asParentCall struct {
	files.Access
	sessionID, turnID, callID string
}

// Unwrap returns the parent's Access (files.Find looks through it).
func (a asParentCall) Unwrap() files.Access { return a.Access }

func (a asParentCall) Write(ctx context.Context, ch files.Change) (files.Written, error) {
	ch.SessionID, ch.TurnID, ch.CallID = a.sessionID, a.turnID, a.callID
	return a.Access.Write(ctx, ch)
}

// undoTurn is the session and turn whose checkpoints keep what this turn
// changes: its own, or its parent's for a subagent's.
func (t *turn) undoTurn() (sessionID, turnID string) {
	if t.parent != nil {
		return t.parent.undoTurn()
	}
	return t.sess.id, t.id
}

// mayDelegate says whether the turn's model is offered delegate: a
// session nested less deep than subagents.maxDepth.
func (t *turn) mayDelegate() bool { return t.sess.depth() < t.svc.subagentCfg.maxDepth }

// subagentModel is the model a subagent talks to: subagents.model when
// kin has it, else its parent's, with the parent's effort where the model
// takes it.
func (s *Service) subagentModel(parent model.Config, effort string) (model.Config, string) {
	id := s.subagentCfg.model
	if id == "" {
		return parent, effort
	}
	m, ok := s.models.Find(id)
	if !ok {
		s.subagentModelOnce.Do(func() {
			s.log.Warn("settings.json subagents.model names a model kin does not have; subagents use their parent's", zap.String("model", id))
		})
		return parent, effort
	}
	if !m.TakesEffort(effort) {
		effort = ""
	}
	return m, effort
}

// delegate runs job's subagent to its end and returns what the delegate
// call reports: the subagent's final answer, or how it ended.
func (t *turn) delegate(ctx context.Context, job delegation) tool.Result {
	s := t.svc
	depth := t.sess.depth() + 1
	cfg, effort := s.subagentModel(t.cfg, t.effort)
	if m := cfg.Missing(); m != "" {
		return tool.Failed(fmt.Sprintf("%s: not started: the subagent's model %s is not configured (%s)", DelegateToolName, cfg.Model, m))
	}
	info := Subagent{Mode: job.mode, Model: cfg.Model}
	release, ok := s.slots.take()
	if !ok {
		if depth > 1 {
			// A subagent holds a slot itself: waiting for another could
			// wait for ever.
			return tool.Failed(fmt.Sprintf("%s: not started: %d subagents are running, as many as subagents.maxRunning allows, and a subagent does not wait for one to end; do the work yourself", DelegateToolName, s.slots.max))
		}
		info.Waiting = true
		t.showSubagent(job, info)
		var err error
		if release, err = s.slots.wait(ctx); err != nil {
			return tool.Result{Status: tool.StatusDenied, Output: "The turn was cancelled while this subagent waited for a free slot; it never started."}
		}
		info.Waiting = false
	}
	defer release()
	child, err := s.newSubagentSession(t, job, cfg.Model, effort, depth)
	if err != nil {
		return tool.Failed(fmt.Sprintf("%s: the subagent could not start: %v", DelegateToolName, err))
	}
	defer child.retire()
	info.SessionID = child.id
	t.keepSubagent(job.callID, info)
	t.showSubagent(job, info)
	ct := s.runSubagent(ctx, t, child, job, cfg, effort)
	return subagentResult(ct, child)
}

// newSubagentSession makes the subagent's session: the parent's folders
// and the instructions in force for it, the subagent's mode and model, its
// first record naming the parent and the call.
func (s *Service) newSubagentSession(t *turn, job delegation, model, effort string, depth int) (*Session, error) {
	roots := t.sess.sessionRoots()
	lin := session.Lineage{SessionID: t.sess.id, TurnID: t.id, CallID: job.callID, Depth: depth}
	info, log, err := s.store.CreateChild(titleFrom(job.task), roots, string(job.mode), lin)
	if err != nil {
		return nil, err
	}
	child := &Session{id: info.SessionID, svc: s, log: log, conv: newConvo(), known: true, roots: roots, title: info.Title,
		mode: job.mode, model: model, effort: effort, dirs: t.sess.instructionDirs(),
		lineage: &lin, parent: t.sess, notOwned: subagentReadOnly{parent: t.sess.id}}
	if _, err := s.register(child, log, model, effort); err != nil {
		return nil, err
	}
	return child, nil
}

// runSubagent runs the subagent's one turn, its question the task, on a
// context its parent's turn ends (so cancelling the parent cancels it, and
// kills its commands); turn/cancel of the subagent's session stops it
// alone. It returns when the turn's end is on record.
func (s *Service) runSubagent(ctx context.Context, parent *turn, child *Session, job delegation, cfg model.Config, effort string) *turn {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r := &running{turnID: newTurnID(), cancel: func() { cancel(nil) }, stop: cancel, done: make(chan struct{})}
	defer close(r.done)
	ct := &turn{svc: s, sess: child, id: r.turnID, budget: s.maxCalls, abort: cancel, parent: parent,
		question: question{rec: session.Record{Type: session.TypeUser, Text: job.task}},
		cfg:      cfg, effort: effort, client: s.client(cfg),
		release: func() {
			child.mu.Lock()
			child.running = nil
			child.mu.Unlock()
		}}
	ct.ev = nestedEvents{Events: s.opts.Events, p: child.parentRef()}
	ct.answer = newAnswer(ct)
	r.answer = ct.answer
	child.mu.Lock()
	child.running = r
	child.mu.Unlock()
	ct.run(cctx)
	return ct
}

// subagentResult is what the delegate call reports of the subagent's
// turn: its final answer when it completed; otherwise how it ended, with
// what it had answered so far. When a call of the subagent's may have run
// without its outcome being known (a command running when it was
// cancelled), the delegate call's outcome is not known either: the
// parent's next question asks the person to acknowledge it.
func subagentResult(ct *turn, child *Session) tool.Result {
	answer := strings.TrimSpace(ct.final)
	end := ct.outcome
	var unknown []string
	for _, u := range child.pendingUnknown() {
		unknown = append(unknown, u.Name)
	}
	if end.Status == TurnCompleted && len(unknown) == 0 {
		if answer == "" {
			answer = "(the subagent finished without an answer)"
		}
		return tool.Result{Status: tool.StatusCompleted, Output: answer, Content: []tool.Content{{Type: "text", Text: answer}}}
	}
	var b strings.Builder
	switch end.Status {
	case TurnCancelled:
		b.WriteString("The subagent was stopped before it answered.")
	case TurnLimit:
		b.WriteString("The subagent stopped at its limit of tool calls, as the person chose.")
	case TurnRefused:
		b.WriteString("The subagent's model refused the task.")
	default:
		b.WriteString("The subagent's turn ended " + end.Status + ".")
	}
	if end.Error != "" {
		b.WriteString(" " + end.Error)
	}
	status := tool.StatusFailed
	if len(unknown) > 0 {
		status = tool.StatusUnknown
		fmt.Fprintf(&b, "\nThe outcome of its calls %s is unknown: they may have happened, and must not be retried automatically.", strings.Join(unknown, ", "))
	}
	if answer != "" {
		b.WriteString("\nWhat it had answered:\n" + answer)
	}
	ct.mu.Lock()
	left := ct.left
	ct.mu.Unlock()
	if left > 0 {
		// kin stopped while calls of the subagent ran as MCP tasks, left
		// running and open in its log: the delegate call stays open too
		// (Open), and the next kin, resuming this session, follows them
		// and ends it (followChild). Unknown for anything that records it.
		b.WriteString("\nkin stopped while calls of the subagent ran as MCP tasks; they were left running, for the next kin to follow.")
		return tool.Result{Status: tool.StatusUnknown, Output: b.String(), Content: []tool.Content{{Type: "text", Text: b.String()}}, Open: true}
	}
	return tool.Result{Status: status, Output: b.String(), Content: []tool.Content{{Type: "text", Text: b.String()}}}
}

// retire closes a subagent's session once its turn has ended: its log is
// given up and its conversation dropped from memory (resume opens it
// again, read-only).
func (sess *Session) retire() {
	sess.close()
	sess.wmu.Lock()
	sess.conv = nil
	sess.wmu.Unlock()
	sess.mu.Lock()
	sess.parent = nil
	sess.mu.Unlock()
}

// keepSubagent notes a delegate call's subagent, for the call's last event
// and its result's record.
func (t *turn) keepSubagent(callID string, info Subagent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.subs == nil {
		t.subs = map[string]Subagent{}
	}
	t.subs[callID] = info
}

// subagentOf is the subagent of a delegate call (nil for another call).
func (t *turn) subagentOf(callID string) *Subagent {
	t.mu.Lock()
	defer t.mu.Unlock()
	if info, ok := t.subs[callID]; ok {
		return &info
	}
	return nil
}

// subagentRef is what a delegate call's result record keeps of its
// subagent.
func subagentRef(info *Subagent) *session.SubagentRef {
	if info == nil || info.SessionID == "" {
		return nil
	}
	return &session.SubagentRef{SessionID: info.SessionID, Mode: string(info.Mode)}
}

// showSubagent reports the delegate call again, running, with what is
// known of its subagent.
func (t *turn) showSubagent(job delegation, info Subagent) {
	t.events().ToolCall(ToolCall{SessionID: t.sess.id, TurnID: t.id, CallID: job.callID, Name: DelegateToolName, Kind: tool.KindOther,
		Title: job.title, Arguments: job.args, Status: CallRunning, Subagent: &info})
}

// countUsage counts the tokens one model request of this turn used (an
// answer, a compaction's summary): into the turn's usage and, for a
// subagent's turn, into the turns it works for (addSubagentUsage).
func (t *turn) countUsage(u model.Usage) { t.countUsageAs(t.cfg.Model, u) }

// countUsageAs is countUsage for a request to modelID (a prompt hook's
// may name a model other than the turn's).
func (t *turn) countUsageAs(modelID string, u model.Usage) {
	c := t.chargeAs(modelID, u) // limits.go: priced, and added to the day and each session it works for
	t.mu.Lock()
	t.usage.InputTokens += u.InputTokens
	t.usage.OutputTokens += u.OutputTokens
	t.addSpend(c)
	t.mu.Unlock()
	if t.parent != nil {
		t.parent.addSubagentUsage(u.InputTokens, u.OutputTokens, c)
	}
}

// addSubagentUsage counts the tokens a subagent's model request used into
// this turn's usage, reports the turn's usage again (turn/usage), and
// passes them on to this turn's own parent: the one place where a
// subagent's usage reaches the turns it works for. c is the request's
// tally, already added to each session and the day by the subagent's
// countUsage (charge): here it only joins this turn's usage, so nothing
// is counted twice. The context fields stay this turn's own.
func (t *turn) addSubagentUsage(in, out int64, c spend.Tally) {
	t.mu.Lock()
	t.usage.InputTokens += in
	t.usage.OutputTokens += out
	t.addSpend(c)
	u := t.usage
	t.mu.Unlock()
	t.events().Usage(UsageUpdate{SessionID: t.sess.id, TurnID: t.id, Usage: u})
	if t.parent != nil {
		t.parent.addSubagentUsage(in, out, c)
	}
}

// nestedEvents are a subagent's turn's events: each says which session,
// turn and call the subagent works for.
type nestedEvents struct {
	Events
	p Parent
}

func (e nestedEvents) TurnStarted(v TurnStarted) { v.Parent = e.p; e.Events.TurnStarted(v) }
func (e nestedEvents) Delta(v Delta)             { v.Parent = e.p; e.Events.Delta(v) }
func (e nestedEvents) ToolCall(v ToolCall)       { v.Parent = e.p; e.Events.ToolCall(v) }
func (e nestedEvents) Reasoning(v ReasoningDelta) {
	v.Parent = e.p
	e.Events.Reasoning(v)
}
func (e nestedEvents) Usage(v UsageUpdate) { v.Parent = e.p; e.Events.Usage(v) }
func (e nestedEvents) TurnDone(v TurnDone) { v.Parent = e.p; e.Events.TurnDone(v) }
func (e nestedEvents) Notice(v Notice)     { v.Parent = e.p; e.Events.Notice(v) }

// ParentOf is, for a subagent's session this kin has open, the session,
// turn and delegate call it works for (zero for any other): front ends
// put it on what they relay of the session (an MCP server's question
// during a subagent's call).
func (s *Service) ParentOf(sessionID string) Parent {
	s.mu.Lock()
	sess := s.sessions[sessionID]
	s.mu.Unlock()
	if sess == nil {
		return Parent{}
	}
	return sess.parentRef()
}
