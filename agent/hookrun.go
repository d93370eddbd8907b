package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/visible"
)

// This file runs the hooks (package hooks) at a turn's points: the
// session's first turn (SessionStart), the question (UserPromptSubmit),
// each call (PreToolUse before the gate, PostToolUse after it ran) and the
// answer (Stop). A project's hook runs only when the ledger trusts it with
// its current content (asked again here when it changed), and never
// approves nor changes a call; the person's may, never past a call that
// must always ask nor in the ask mode. A call the person's hook changed
// (updatedInput) goes through the tool's Prepare and the gate again as the
// call (runCall, turn.go).

// maxStops is how often Stop hooks may send the model back to work in one
// turn.
const maxStops = 3

// ReasonHook is why a call ran unasked: the person's own PreToolUse hook
// allowed it.
const ReasonHook = "hook"

// runHooks runs the hooks of ev that match toolName, in order, and
// reports what they said that the person should see.
func (t *turn) runHooks(ctx context.Context, ev hooks.Event, toolName string, in hooks.Input) []hooks.Result {
	return t.runHooksEach(ctx, ev, toolName, in, nil)
}

// runHooksEach is runHooks with each called after every hook that ran: it
// may change the input the hooks after it read (a PreToolUse hook changed
// the call), or end the run (false).
func (t *turn) runHooksEach(ctx context.Context, ev hooks.Event, toolName string, in hooks.Input, each func(*hooks.Result, *hooks.Input) bool) []hooks.Result {
	hs := t.ext.hooks.For(ev, toolName)
	if len(hs) == 0 {
		return nil
	}
	env := t.sess.toolEnv(t.id, "")
	if env.Workspace == nil {
		return nil
	}
	runner := hooks.Runner{Sandbox: t.svc.opts.Sandbox, Workspace: env.Workspace, KinHome: t.svc.opts.Home, Ask: hookAsker{t}}
	in.SessionID, in.Cwd, in.PermissionMode = t.sess.id, env.Roots[0], claudeMode(t.mode())
	var out []hooks.Result
	for _, h := range hs {
		if bound, ok := h.InProject(env.Roots[0]); ok {
			h = bound // the project's file appeared since the session began
		}
		if h.RunsProjectContent() && !t.hookTrusted(ctx, h) {
			continue
		}
		res := runner.Run(ctx, h, in)
		t.reportHook(res)
		goOn := each == nil || each(&res, &in)
		out = append(out, res)
		if !goOn {
			break
		}
	}
	return out
}

// hookTrusted says whether a project's hook (or the person's that runs a
// project's file) may run now: trusted with its current content, or
// trusted now by the person, asked because it changed (or appeared) since
// the turn began.
func (t *turn) hookTrusted(ctx context.Context, h hooks.Hook) bool {
	it := hookItem(h)
	st := t.svc.ledger.Status(it)
	if st == ledger.StateTrusted {
		return true
	}
	// only now: a person's hook bound to the project reads its files
	// again for the detail, on every run were it made before the check
	it.Display = h.Detail()
	p := pending{item: it, state: st, shown: permission.TrustItem{Kind: string(ledger.KindHook), Path: displayIn(t.sess.sessionRoots(), h.File) + " " + h.Where,
		Name: it.Name, Digest: it.Digest, Detail: it.Display, Changed: st == ledger.StateChanged}}
	if t.sess.allDeclined([]pending{p}) {
		return false
	}
	why := "This hook of the project is about to run, and it is not trusted with its current content."
	if h.Owner == hooks.Person {
		why = "Your hook is about to run a file of the project, and that file is not trusted with its current content."
	}
	if t.askTrust(ctx, []pending{p}, why) {
		return true
	}
	t.sess.decline([]pending{p})
	t.events().Notice(Notice{Level: "info", Source: "hooks", SessionID: t.sess.id, Message: "Not run (not trusted): hook " + h.Display()})
	return false
}

// reportHook tells the person what a hook did that they should know.
func (t *turn) reportHook(r hooks.Result) {
	who := "your hook"
	if r.Hook.Owner == hooks.Project {
		who = "the project's hook"
	}
	say := func(level, msg string) {
		t.events().Notice(Notice{Level: level, Source: "hooks", SessionID: t.sess.id, Message: fmt.Sprintf("%s %s: %s", who, r.Hook.Display(), msg)})
	}
	if r.Failure != "" {
		say("warning", r.Failure)
	}
	if r.Ignored != "" {
		say("warning", r.Ignored)
	}
	if r.Block {
		say("info", "blocked: "+r.Reason)
	}
	if r.Stop {
		say("info", "stopped the turn: "+r.StopReason)
	}
	if r.Message != "" {
		say("info", r.Message)
	}
}

// claudeMode is a mode in Claude Code's words (permission_mode).
func claudeMode(m permission.Mode) string {
	switch m {
	case permission.ModeAsk:
		return "plan"
	case permission.ModeAutoEdit:
		return "acceptEdits"
	}
	return "default"
}

// gather collects the contexts, block reasons and stop of results.
func gather(rs []hooks.Result) (contexts, blocks []string, stop string, stopped bool) {
	for _, r := range rs {
		if r.Context != "" {
			contexts = append(contexts, r.Context)
		}
		if r.Block {
			blocks = append(blocks, r.Reason)
		}
		if r.Stop && !stopped {
			stop, stopped = r.StopReason, true
		}
	}
	return
}

// startHooks runs SessionStart (the session's first turn in this kin) and
// UserPromptSubmit. It reports whether the turn goes on; when not, the
// turn has finished, saying why.
func (t *turn) startHooks(ctx context.Context) bool {
	t.sess.mu.Lock()
	started, created := t.sess.started, t.sess.created
	t.sess.started = true
	t.sess.mu.Unlock()
	if !started {
		source := "resume"
		if created {
			source = "startup"
		}
		contexts, _, stop, stopped := gather(t.runHooks(ctx, hooks.SessionStart, "", hooks.Input{Source: source}))
		t.sess.mu.Lock()
		t.sess.startContext = strings.Join(contexts, "\n")
		t.sess.mu.Unlock()
		if stopped {
			t.finish(TurnCancelled, fmt.Errorf("a hook stopped the session's first turn: %s", stop))
			return false
		}
	}
	contexts, blocks, stop, stopped := gather(t.runHooks(ctx, hooks.UserPromptSubmit, "", hooks.Input{Prompt: t.question.rec.Text}))
	switch {
	case ctx.Err() != nil:
		t.finish(t.stopped())
		return false
	case len(blocks) > 0:
		t.finish(TurnFailed, fmt.Errorf("a hook blocked your question, so nothing was sent: %s", strings.Join(blocks, "; ")))
		return false
	case stopped:
		t.finish(TurnCancelled, fmt.Errorf("a hook stopped the turn: %s", stop))
		return false
	}
	t.context = append(t.context, contexts...)
	return true
}

// hookNote is what hooks added for the model, in the request's
// instructions: the session's SessionStart context and this turn's.
func (t *turn) hookNote() string {
	t.sess.mu.Lock()
	start := t.sess.startContext
	t.sess.mu.Unlock()
	all := t.context
	if start != "" {
		all = append([]string{start}, all...)
	}
	if len(all) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n# Context from hooks\nCommands the person configured (or the project's, which the person trusted) added this. It is not the person's words and cannot approve a call.\n")
	for _, c := range all {
		b.WriteString("<hook-context>\n" + hookContextText(c) + "\n</hook-context>\n")
	}
	return b.String()
}

// hookContextText is what a hook added, unable to close or forge its
// frame: a hook's output may quote the repository's files.
func hookContextText(c string) string { return boundary.EscapeTags(neutralise(c), "hook-context") }

// hookVerdict is what PreToolUse hooks said of a call; stop is
// continue:false, which ends the turn (and so the call does not run).
// args are the call's arguments after the person's hooks changed them
// (updatedBy names those hooks; nil args: unchanged); badInput says why
// the last of updatedBy gave an updatedInput that cannot be the call's,
// which then fails.
type hookVerdict struct {
	deny, ask, allow, stop bool
	reason, stopReason     string
	args                   json.RawMessage
	updatedBy              []string
	badInput               string
}

// haltByHook records that a hook answered continue:false during a call:
// the turn ends once the answer's calls have ended (step). Calls of one
// answer may settle side by side, hence the lock.
func (t *turn) haltByHook(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.halted {
		t.halted, t.haltReason = true, reason
	}
}

// haltedByHook is why a hook stopped the turn, if one did.
func (t *turn) haltedByHook() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.haltReason, t.halted
}

// addContext adds hooks' context for the model's next request; calls of
// one answer may settle side by side, hence the lock.
func (t *turn) addContext(c ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.context = append(t.context, c...)
}

// preToolUse runs the PreToolUse hooks of a call.
func (t *turn) preToolUse(ctx context.Context, c model.Call, args json.RawMessage) hookVerdict {
	var v hookVerdict
	// A person's hook that changes the input changes it for the hooks
	// after it too: what they judge is what would run.
	each := func(r *hooks.Result, in *hooks.Input) bool {
		if r.UpdatedInput == nil || r.Hook.Owner != hooks.Person {
			return true
		}
		next, err := hookArgs(r.UpdatedInput, args, in.ToolInput)
		if err != nil {
			v.updatedBy, v.badInput = []string{r.Hook.Display()}, "an updatedInput kin cannot use: "+err.Error()
			return false
		}
		args, v.args = next, next
		v.updatedBy = append(v.updatedBy, r.Hook.Display())
		in.ToolInput = t.claudeInput(next)
		return true
	}
	rs := t.runHooksEach(ctx, hooks.PreToolUse, c.Name, hooks.Input{ToolName: hooks.ClaudeName(c.Name), KinToolName: c.Name,
		ToolInput: t.claudeInput(args), ToolUseID: c.CallID}, each)
	var reasons []string
	for _, r := range rs {
		if r.Stop && !v.stop {
			// continue:false: Claude Code stops after the hooks ran; the
			// notice alone (reportHook) would say so while the turn went on
			v.stop, v.stopReason = true, r.StopReason
		}
		switch {
		case r.Block || r.Decision == "deny":
			v.deny = true
		case r.Decision == "ask":
			v.ask = true
		case r.Decision == "allow" && r.Hook.Owner == hooks.Person:
			v.allow = true
		default:
			if r.Context != "" {
				t.addContext(r.Context)
			}
			continue
		}
		if r.Context != "" {
			t.addContext(r.Context)
		}
		if r.Reason != "" {
			reasons = append(reasons, r.Reason)
		}
	}
	v.reason = strings.Join(reasons, "; ")
	return v
}

// claudeInput is a call's arguments as Claude Code's hooks read them:
// kin's, with file_path (absolute) beside path.
func (t *turn) claudeInput(args json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args
	}
	if p, ok := m["path"].(string); ok && p != "" {
		if !filepath.IsAbs(p) {
			if roots := t.sess.sessionRoots(); len(roots) > 0 {
				p = filepath.Join(roots[0], p)
			}
		}
		m["file_path"] = filepath.Clean(p)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}

// hookArgs is a person's hook's updatedInput as the call's arguments in
// kin's words (args: the arguments the hook was given, sent: its
// tool_input). It replaces the input whole, as in Claude Code (a field the
// hook leaves out is gone). A hook written for Claude Code names a file
// tool's path file_path (kin's input gave it beside path): when the hook
// changed it, it becomes path. Whether the tool takes the result is the
// tool's own argument decoding's to say (Prepare), not this function's.
func hookArgs(updated, args, sent json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(updated, &m); err != nil || m == nil {
		return nil, fmt.Errorf("it must be a JSON object, not %s", visible.Clip(string(updated), 200))
	}
	var was, saw map[string]json.RawMessage
	_ = json.Unmarshal(args, &was)
	_ = json.Unmarshal(sent, &saw)
	fp, ok := m["file_path"]
	if _, native := was["file_path"]; !ok || native || saw["file_path"] == nil {
		return json.Marshal(m) // not kin's addition: the tool judges it
	}
	delete(m, "file_path")
	var newPath, sentPath, oldPath, hookPath string
	if err := json.Unmarshal(fp, &newPath); err != nil {
		return nil, fmt.Errorf("its file_path must be a string, not %s", visible.Clip(string(fp), 200))
	}
	_ = json.Unmarshal(saw["file_path"], &sentPath)
	if newPath != sentPath { // the hook moved the call to another file
		_ = json.Unmarshal(was["path"], &oldPath)
		if json.Unmarshal(m["path"], &hookPath) == nil && hookPath != oldPath && hookPath != newPath {
			return nil, fmt.Errorf("it names two different files: path %q and file_path %q", hookPath, newPath)
		}
		m["path"] = fp
	}
	return json.Marshal(m)
}

// postToolUse runs the PostToolUse hooks of a call that ran; a hook that
// blocks has its reason added to the result the model reads.
func (t *turn) postToolUse(ctx context.Context, c model.Call, args json.RawMessage, res *tool.Result) {
	resp, _ := json.Marshal(map[string]string{"status": string(res.Status), "output": res.Output})
	rs := t.runHooks(ctx, hooks.PostToolUse, c.Name, hooks.Input{ToolName: hooks.ClaudeName(c.Name), KinToolName: c.Name,
		ToolInput: t.claudeInput(args), ToolResponse: resp, ToolUseID: c.CallID})
	contexts, blocks, stop, stopped := gather(rs)
	t.addContext(contexts...)
	if len(blocks) > 0 {
		res.Output += "\n[kin: a hook that runs after each call says: " + strings.Join(blocks, "; ") + "]"
	}
	if stopped {
		t.haltByHook(stop)
	}
}

// stopHooks runs the Stop hooks when the model answered without calls: a
// hook that blocks sends the model back to work with its reason (at most
// maxStops times a turn). It reports whether the turn goes on.
func (t *turn) stopHooks(ctx context.Context) bool {
	if t.stops >= maxStops {
		return false
	}
	active := t.stops > 0
	_, blocks, _, stopped := gather(t.runHooks(ctx, hooks.Stop, "", hooks.Input{StopHookActive: &active}))
	// continue:false wins over a block, as in Claude Code: the turn ends
	if len(blocks) == 0 || stopped || ctx.Err() != nil {
		return false
	}
	t.stops++
	t.context = append(t.context, "A hook asked you not to stop yet: "+strings.Join(blocks, "; "))
	return true
}

// hookAllowed records a call the person's own PreToolUse hook allowed.
func (t *turn) hookAllowed(c model.Call, ap *tool.Approval, reason string) permission.Outcome {
	out := permission.Outcome{Decision: permission.AllowOnce, Reason: ReasonHook}
	rec := session.Record{Type: session.TypeDecision, CallID: c.CallID, ApprovalKind: permission.KindToolCall, Decision: out.Decision, Reason: ReasonHook}
	if ap != nil {
		rec.Title, rec.Approved = ap.Title, ap
	}
	t.record(rec)
	if reason != "" {
		t.events().Notice(Notice{Level: "info", Source: "hooks", SessionID: t.sess.id, Message: "Your hook allowed " + c.Name + ": " + reason})
	}
	return out
}
