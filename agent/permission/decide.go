package permission

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kin-dev/kin/agent/tool"
)

// Mode is a session's working mode: how much the person lets kin do
// without asking. The gate is the one place that reads it.
type Mode string

// Modes.
const (
	// ModeAsk offers the model only tools that change nothing, and refuses
	// any other call, whatever the grants.
	ModeAsk Mode = "ask"
	// ModeAgent (the default) asks for every change and command that no
	// grant covers.
	ModeAgent Mode = "agent"
	// ModeAutoEdit applies file edits inside the session's folders without
	// asking (paths that always ask still ask); commands still ask, except
	// confined, network-less ones when autoApproveSandboxedCommands is on.
	ModeAutoEdit Mode = "auto-edit"
)

// ParseMode checks a mode's name; "" is the default, agent.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return ModeAgent, nil
	case ModeAsk, ModeAgent, ModeAutoEdit:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q is not one of ask, agent, auto-edit", s)
}

// Narrower is the narrower of two modes (ask, then agent, then auto-edit):
// what a subagent gets, so it never does more unasked than its parent.
func Narrower(a, b Mode) Mode {
	rank := func(m Mode) int {
		switch m {
		case ModeAsk:
			return 0
		case ModeAutoEdit:
			return 2
		}
		return 1 // agent, and "" (its spelling as the default)
	}
	if rank(b) < rank(a) {
		return b
	}
	return a
}

// KindContinue asks whether a turn that reached its limit of tool calls
// may make more.
const KindContinue = "continue"

// Reasons the gate decided without asking (besides ReasonGrant).
const (
	// ReasonMode: the session's mode decided (ask refused a call that could
	// change something; auto-edit allowed an edit or a contained command).
	ReasonMode = "mode"
	// ReasonNotNeeded: the call needs no approval (a confined read, an MCP
	// tool its approved server declared read-only). Nothing is recorded.
	ReasonNotNeeded = "not_needed"
)

// AskModeRefusal is the result of a call the session's ask mode refused
// (ReasonMode, Deny): what happened, why, and how the person allows such
// calls. The model reads it as the call's output and every front end shows
// it on the call, so nobody sees only "denied".
const AskModeRefusal = "Refused because the session is in ask mode, which offers no tools that change files or run commands; nothing was run or sent. To allow changes, the person switches the mode to Agent (asks before each change) or Auto-edit."

// Call is one tool call as the gate decides on it.
type Call struct {
	SessionID, TurnID, CallID string
	Mode                      Mode
	// Roots are the session's folders: auto-edit applies only edits whose
	// every file lies inside them.
	Roots    []string
	ToolName string
	ToolKind tool.Kind
	// ReadOnly is set for a tool that changes nothing (see tool.ReadOnly).
	ReadOnly bool
	// Approval is what the call would show the person; nil when it needs
	// no approval.
	Approval *tool.Approval
	// Revise, when set, brings the approval again while the person decides,
	// each time what it shows changed (the file a diff was made from was
	// typed into): the request is replaced in place (Outcome.Revision
	// counts them). The caller keeps what each revision would run.
	Revise <-chan tool.Approval
	// Parent is set for a subagent's call. Its mode is never wider than
	// its parent's (the caller clamps it), and the grants it uses are the
	// person's session's (Parent.Root; a grandchild's too, not its
	// parent subagent's): the person gave them for the work that session
	// does, and "always allow in this session" given to the subagent's
	// call is kept for that session.
	Parent Parent
}

// Decide is the gate's one decision for a tool call, for built-in and MCP
// tools alike: the session's mode first, then the call's own needs, the
// standing grants, and only then the person (asking is called just before
// the question goes out). The outcome's Reason says who decided.
func (g *Gate) Decide(ctx context.Context, c Call, asking func()) Outcome {
	ap := c.Approval
	if c.Mode == ModeAsk && !c.ReadOnly {
		return Outcome{Decision: Deny, Reason: ReasonMode}
	}
	if ap == nil || ap.AutoAllow {
		return Outcome{Decision: AllowOnce, Reason: ReasonNotNeeded}
	}
	if c.Mode == ModeAutoEdit && autoEdits(c) {
		return Outcome{Decision: AllowOnce, Reason: ReasonMode}
	}
	if !ap.AlwaysAsk && ap.Grant != nil && g.grants.Allows(c.GrantSession(), *ap.Grant) {
		return Outcome{Decision: AllowAlways, Reason: ReasonGrant}
	}
	if asking != nil {
		asking()
	}
	return g.ask(ctx, Request{SessionID: c.SessionID, TurnID: c.TurnID, CallID: c.CallID, Parent: c.Parent, Kind: KindToolCall,
		ToolName: c.ToolName, ToolKind: c.ToolKind, Approval: *ap}, c.Revise)
}

// GrantSession is the session whose grants answer the call, and keep the
// person's "always allow in this session": its own, or for a subagent's
// call the person's session it works for, however deep.
func (c Call) GrantSession() string {
	if r := c.Parent.Root(); r != "" {
		return r
	}
	return c.SessionID
}

// autoEdits reports whether the auto-edit mode lets c run without asking:
// a file edit whose every file is inside the session's folders and that
// need not always ask, or a command kin runs confined and without network
// (AutoEditAllows: the sandbox says so and the person turned the setting
// on). Never an unconfined command, never an MCP call.
func autoEdits(c Call) bool {
	ap := c.Approval
	if ap.AlwaysAsk {
		return false
	}
	switch c.ToolKind {
	case tool.KindEdit:
		if len(ap.Diffs) == 0 || ap.Server != "" {
			return false
		}
		for _, d := range ap.Diffs {
			if !inside(c.Roots, d.Path) {
				return false
			}
		}
		return true
	case tool.KindExecute:
		return ap.AutoEditAllows && ap.Sandbox.Contained()
	}
	return false
}

func inside(roots []string, p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = filepath.Clean(p)
	for _, r := range roots {
		rel, err := filepath.Rel(r, p)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// ContinueRequest is the question a turn asks when it has made limit tool
// calls: go on for limit more, or stop.
func ContinueRequest(sessionID, turnID string, limit int) Request {
	return Request{
		SessionID: sessionID, TurnID: turnID, Kind: KindContinue,
		Approval: tool.Approval{Title: fmt.Sprintf("kin has made %d tool calls in this turn. Continue for %d more?", limit, limit)},
		Options: []Option{
			{OptionID: AllowOnce, Name: fmt.Sprintf("Continue for %d more", limit), Kind: OptionAllowOnce},
			{OptionID: Deny, Name: "Stop the turn", Kind: OptionRejectOnce},
		},
	}
}
