package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/sandbox"
	"github.com/kin-dev/kin/agent/visible"
)

// maxOutput bounds what kin keeps of a hook's stdout and of its stderr.
const maxOutput = 64 << 10

// Input is what a hook reads on stdin (Claude Code's field names).
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	HookEventName  Event           `json:"hook_event_name"`
	Source         string          `json:"source,omitempty"` // SessionStart: startup, resume
	Prompt         string          `json:"prompt,omitempty"`
	ToolName       string          `json:"tool_name,omitempty"`
	KinToolName    string          `json:"kin_tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	StopHookActive *bool           `json:"stop_hook_active,omitempty"`
}

// Runner runs hooks with the command rules of a session's workspace.
type Runner struct {
	// Sandbox confines hooks as commands are confined (nil: the default).
	Sandbox *sandbox.Sandbox
	// Workspace is the session's trust boundary: its roots are writable to
	// a confined hook, its protection and secrets apply.
	Workspace *boundary.Workspace
	// KinHome is $KIN_HOME: its hooks folder stays readable to a confined
	// hook; everything else in it is hidden.
	KinHome string
	// Env is the environment hooks start from (nil: this process's); kin's
	// model keys are taken out.
	Env []string
	// Shell runs the command as Shell -c command (default /bin/bash, else
	// /bin/sh).
	Shell string
	// Ask sends a prompt hook's request to the session's model service
	// (nil: prompt hooks fail, blocking nothing); agent hooks run when it
	// is an AgentAsker too (else they fail, blocking nothing).
	Ask Asker
}

// Result is what one hook said.
type Result struct {
	Hook Hook
	// Failure says why the hook did not run or failed (a non-zero exit
	// other than 2, a timeout, output that is not the contract): reported,
	// never blocking.
	Failure string
	// Block is set by exit code 2, decision "block", or a PreToolUse
	// "deny"; Reason says why (stderr for exit 2).
	Block  bool
	Reason string
	// Decision is PreToolUse's permissionDecision: allow, deny or ask
	// ("" when none). A project's allow is dropped (Ignored says so).
	Decision string
	Ignored  string
	// Context is additionalContext (or, for SessionStart and
	// UserPromptSubmit, plain stdout): text for the model.
	Context string
	// Stop is continue:false: the turn stops, StopReason says why.
	Stop       bool
	StopReason string
	// Message is systemMessage: for the person.
	Message string
	// UpdatedInput is PreToolUse's hookSpecificOutput.updatedInput: the
	// person's hook replaces the call's input with it (kin checks it is an
	// object the tool takes). A project's is dropped (Ignored says so).
	UpdatedInput json.RawMessage
	// SuppressOutput is suppressOutput: in Claude Code it hides the hook's
	// stdout from the transcript. kin never shows a hook's stdout to the
	// person (only systemMessage, reasons and failures), so it changes
	// nothing there; the stdout still reaches the model as context.
	SuppressOutput bool
}

// Run runs one hook with input and reads its answer. ctx ending stops it.
func (r Runner) Run(ctx context.Context, h Hook, in Input) Result {
	res := Result{Hook: h}
	in.HookEventName = h.Event
	stdin, err := json.Marshal(in)
	if err != nil {
		res.Failure = err.Error()
		return res
	}
	switch h.Type {
	case TypePrompt:
		return r.runPrompt(ctx, h, stdin)
	case TypeAgent:
		return r.runAgent(ctx, h, stdin)
	case TypeHTTP:
		return r.runHTTP(ctx, h, stdin)
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	cmd, cleanup, err := r.command(ctx, h)
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Failure = fmt.Sprintf("timed out after %v while its sandbox was set up (%v); it did not run and blocks nothing", h.Timeout, err)
		return res
	case err != nil && ctx.Err() != nil:
		res.Failure = "stopped: the turn was cancelled before it ran"
		return res
	case err != nil:
		res.Failure = err.Error()
		return res
	}
	defer cleanup()
	var stdout, stderr limited
	stdout.n, stderr.n = maxOutput, maxOutput
	// The pipes are kin's own, not os/exec's: its Wait waits for every
	// copy to end, so a child the hook left in the background holding
	// them (`notify-send … &`) made Wait fail with ErrWaitDelay after the
	// hook had answered, and a hook that failed blocks nothing: its deny
	// was dropped. The hook's answer is what it wrote before it exited.
	p, err := newPipes()
	if err != nil {
		res.Failure = "could not start: " + err.Error()
		return res
	}
	defer p.close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.inR, p.outW, p.errW
	if err := cmd.Start(); err != nil {
		res.Failure = "could not start: " + err.Error()
		return res
	}
	p.started(stdin, &stdout, &stderr)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		p.drain()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.Failure = fmt.Sprintf("timed out after %v and was stopped; it blocks nothing", h.Timeout)
		} else {
			res.Failure = "stopped: the turn was cancelled"
		}
		return res
	}
	killGroup(cmd) // what it left running in its group
	p.drain()      // and what left the group may hold the pipes a moment
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		res.Failure = err.Error()
		return res
	}
	switch code {
	case 0:
		res.parse(stdout.String())
	case 2:
		res.Block = true
		res.Reason = strings.TrimSpace(stderr.String())
		if res.Reason == "" {
			res.Reason = "blocked by a hook (it gave no reason)"
		}
	default:
		res.Failure = fmt.Sprintf("exited with status %d; it blocks nothing", code)
		if e := strings.TrimSpace(stderr.String()); e != "" {
			res.Failure += ": " + visible.Clip(e, 500)
		}
	}
	return res
}

// output is a hook's JSON answer.
type output struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	SystemMessage      string `json:"systemMessage"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	SuppressOutput     bool   `json:"suppressOutput"`
	HookSpecificOutput *struct {
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		AdditionalContext        string          `json:"additionalContext"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// parse reads exit 0's stdout: JSON when it is an object, else (for the
// events that take it) context.
func (res *Result) parse(stdout string) {
	text := strings.TrimSpace(stdout)
	if text == "" {
		return
	}
	if !strings.HasPrefix(text, "{") {
		if res.Hook.Event == SessionStart || res.Hook.Event == UserPromptSubmit {
			res.Context = text
		}
		return
	}
	var o output
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		res.Failure = "its output is not JSON (" + err.Error() + "); it blocks nothing"
		return
	}
	res.Message, res.SuppressOutput = o.SystemMessage, o.SuppressOutput
	if o.Continue != nil && !*o.Continue {
		res.Stop, res.StopReason = true, o.StopReason
	}
	switch strings.ToLower(o.Decision) {
	case "block":
		res.Block, res.Reason = true, o.Reason
		if res.Hook.Event == PreToolUse {
			res.Decision = "deny"
		}
	case "approve":
		if res.Hook.Event == PreToolUse {
			res.Decision, res.Reason = "allow", o.Reason
		}
	}
	if hs := o.HookSpecificOutput; hs != nil {
		res.Context = hs.AdditionalContext
		switch d := strings.ToLower(hs.PermissionDecision); d {
		case "allow", "deny", "ask":
			if res.Hook.Event == PreToolUse {
				res.Decision, res.Reason = d, hs.PermissionDecisionReason
				res.Block = d == "deny"
			}
		}
		// "null" is no update; anything else is kept as given, so that a
		// value that is not an object fails the call instead of vanishing
		if u := bytes.TrimSpace(hs.UpdatedInput); res.Hook.Event == PreToolUse && len(u) > 0 && string(u) != "null" {
			res.UpdatedInput = u
		}
	}
	var ignored []string
	if res.Decision == "allow" && res.Hook.Owner == Project {
		res.Decision = ""
		ignored = append(ignored, "its allow")
	}
	if res.UpdatedInput != nil && res.Hook.Owner == Project {
		// a project's hook would otherwise choose what runs: the person
		// trusted it to judge calls, not to write them
		res.UpdatedInput = nil
		ignored = append(ignored, "its updatedInput (the call runs as the model asked)")
	}
	if len(ignored) > 0 {
		verb := " was ignored"
		if len(ignored) > 1 {
			verb = " were ignored"
		}
		res.Ignored = "a project's hook may deny, ask or add context, never allow a call or change its input; " + strings.Join(ignored, " and ") + verb
	}
}

// command builds the hook's process: confined where commands are, with
// the command environment. Setting up the sandbox stops waiting (for
// another kin's lock on its placeholders) when ctx ends: the hook's
// timeout, or the turn cancelled.
func (r Runner) command(ctx context.Context, h Hook) (*exec.Cmd, func(), error) {
	shell := r.Shell
	if shell == "" {
		shell = "/bin/bash"
		if _, err := os.Stat(shell); err != nil {
			shell = "/bin/sh"
		}
	}
	environ := r.Env
	if environ == nil {
		environ = os.Environ()
	}
	env := boundary.CommandEnv(environ, r.KinHome)
	cwd := ""
	var roots []string
	if r.Workspace != nil {
		roots = r.Workspace.Roots()
		cwd = roots[0]
	}
	if h.Project != "" {
		cwd = h.Project
	}
	if cwd != "" {
		env = append(env, "CLAUDE_PROJECT_DIR="+cwd, "KIN_PROJECT_DIR="+cwd)
	}
	sb := r.Sandbox
	if sb == nil {
		sb = sandbox.Default()
	}
	st := sb.Status()
	switch {
	case st.Refuses():
		return nil, nil, fmt.Errorf("not run: settings.json requires a sandbox (\"sandbox\": \"required\") and %s", st.Reason)
	case st.Confined && r.Workspace != nil:
		p := sb.For(roots, false, r.Workspace.Protect(sb.Extra(roots)), r.Workspace.Secrets().Hidden())
		if r.KinHome != "" {
			// the person's hook scripts may live in $KIN_HOME/hooks: the
			// innermost entry decides, so it is readable inside the
			// hidden home
			p.ReadOnly = append(p.ReadOnly, filepath.Join(r.KinHome, "hooks"))
		}
		return sb.CommandContext(ctx, p, cwd, env, shell, "-c", h.Command)
	}
	cmd := exec.Command(shell, "-c", h.Command)
	cmd.Dir, cmd.Env = cwd, env
	cmd.SysProcAttr = groupAttr()
	return cmd, func() {}, nil
}

// drainWait is how long kin reads what a hook's children still write
// once the hook exited and its group was stopped (a child that left the
// group may hold the pipes): then they are closed.
const drainWait = 500 * time.Millisecond

// pipes are a hook's standard input, output and error: kin writes the
// input and reads the output itself, so that the hook's exit, not the
// pipes' end, is when it answered.
type pipes struct {
	inR, inW, outR, outW, errR, errW *os.File
	// done is closed when the input is written and both outputs are read
	// to their end (or closed)
	done chan struct{}
}

func newPipes() (*pipes, error) {
	p := &pipes{done: make(chan struct{})}
	for _, pr := range []struct{ r, w **os.File }{{&p.inR, &p.inW}, {&p.outR, &p.outW}, {&p.errR, &p.errW}} {
		r, w, err := os.Pipe()
		if err != nil {
			p.close()
			return nil, err
		}
		*pr.r, *pr.w = r, w
	}
	return p, nil
}

// started closes the hook's ends in kin and starts writing its input and
// reading its outputs.
func (p *pipes) started(input []byte, stdout, stderr *limited) {
	for _, f := range []*os.File{p.inR, p.outW, p.errW} {
		f.Close()
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		// a hook that does not read its input gets EPIPE or is stopped:
		// neither is its answer
		_, _ = p.inW.Write(input)
		p.inW.Close()
	}()
	for _, c := range []struct {
		r   *os.File
		dst *limited
	}{{p.outR, stdout}, {p.errR, stderr}} {
		go func() {
			defer wg.Done()
			_, _ = io.Copy(c.dst, c.r)
		}()
	}
	go func() { wg.Wait(); close(p.done) }()
}

// drain waits, at most drainWait, for the input and outputs to end, then
// closes kin's ends and waits for their copies to stop (the outputs are
// then safe to read).
func (p *pipes) drain() {
	select {
	case <-p.done:
	case <-time.After(drainWait):
	}
	p.close()
	<-p.done
}

// close closes every end kin holds (closing one twice is harmless).
func (p *pipes) close() {
	for _, f := range []*os.File{p.inR, p.inW, p.outR, p.outW, p.errR, p.errW} {
		if f != nil {
			f.Close()
		}
	}
}

// limited keeps the first n bytes written.
type limited struct {
	bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.Len(); room > 0 {
		l.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
