// Package permission is the one gate every call passes before it may act:
// it asks the person (through package ask's Broker, which every question to
// the person shares) and waits for a decision, and it keeps the standing
// "always allow" grants.
//
// Default deny: a request that is not answered with an explicit allow (the
// turn is cancelled, the editor goes away, the service shuts down) is
// denied. The gate never decides "allow" on its own except from a grant the
// person gave.
package permission

import (
	"context"
	"errors"
	"fmt"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/tool"
)

// Decisions, which are also the optionIds editors send back.
const (
	AllowOnce   = "allow_once"
	AllowAlways = "allow_always"
	// AllowAlwaysPermanent is "always allow" kept for every session
	// ($KIN_HOME/grants.json) rather than for this one.
	AllowAlwaysPermanent = "allow_always_permanent"
	Deny                 = "deny"
	Trust                = "trust"
)

// Request kinds.
const (
	KindToolCall    = "tool_call"
	KindLaunch      = "server_launch"
	KindAcknowledge = "acknowledge_unknown"
	// KindProjectTrust asks whether to trust what a folder brings (its
	// skills, hooks, instruction files): Items lists them.
	KindProjectTrust = "project_trust"
	// KindMCPSkill asks before an MCP server's skill is loaded: Items
	// holds it, with its manifest's digest.
	KindMCPSkill = "mcp_skill"
)

// TrustItem is one thing a project_trust or mcp_skill request shows.
type TrustItem struct {
	Kind   string // skill, hook, instructions, mcp_skill
	Path   string // as a person reads it
	Name   string
	Digest string
	// Detail is a hook's command line, a skill's description.
	Detail string
	// Changed says it was trusted with other content.
	Changed bool
}

// Reasons a request was resolved (ReasonGrant: an existing grant answered
// it, without asking).
const (
	ReasonPerson       = ask.ReasonPerson
	ReasonGrant        = "grant"
	ReasonCancelled    = ask.ReasonCancelled
	ReasonDisconnected = ask.ReasonDisconnected
	ReasonShutdown     = ask.ReasonShutdown
)

// Option kinds, the Agent Client Protocol's.
const (
	OptionAllowOnce   = "allow_once"
	OptionAllowAlways = "allow_always"
	OptionRejectOnce  = "reject_once"
)

// Option is one choice, in the Agent Client Protocol's shape.
type Option struct {
	OptionID string
	Name     string
	Kind     string // OptionAllowOnce, OptionAllowAlways, OptionRejectOnce
}

// Parent names, for a subagent's call, the session, turn and delegate call
// the subagent works for (zero for a call of a person's session).
type Parent struct {
	SessionID, TurnID, CallID string
	// Above are the sessions above SessionID, nearest first, up to the
	// person's session (a grandchild subagent's: its parent's parent and
	// so on), as far as they run in this kin.
	Above []string
}

// Sessions are every session the subagent works for, nearest first:
// SessionID, then Above (none for a person's session).
func (p Parent) Sessions() []string {
	if p.SessionID == "" {
		return nil
	}
	return append([]string{p.SessionID}, p.Above...)
}

// Root is the person's session the subagent works for: the last of
// Sessions ("" for a person's session).
func (p Parent) Root() string {
	if s := p.Sessions(); len(s) > 0 {
		return s[len(s)-1]
	}
	return ""
}

// Request is what the person is asked to approve: the Body of an
// ask.Question of kind approval.
type Request struct {
	RequestID string // set by Ask
	SessionID string
	TurnID    string
	CallID    string
	Kind      string
	ToolName  string
	ToolKind  tool.Kind
	tool.Approval
	// For server launches.
	Transport string
	Scope     string
	// ReadOnlyTools are the tools trusting the server lets run without
	// asking, when kin knows them.
	ReadOnlyTools []string
	// Items are what a project_trust or mcp_skill request asks about.
	Items []TrustItem

	Options []Option

	// Parent is set for a subagent's call: the question belongs to that
	// session too.
	Parent Parent
}

// Gate asks and waits.
type Gate struct {
	broker *ask.Broker
	grants *Grants
}

// NewGate returns a gate that asks through b and keeps grants in g.
func NewGate(b *ask.Broker, g *Grants) *Gate {
	return &Gate{broker: b, grants: g}
}

// Grants returns the gate's grant store.
func (g *Gate) Grants() *Grants { return g.grants }

// ErrUnknownRequest is returned by Respond for an id that is not pending.
var ErrUnknownRequest = ask.ErrUnknown

// ErrNotAnOption is returned by Respond for a decision the request does
// not offer.
var ErrNotAnOption = errors.New("not one of this request's options")

// Outcome is what Ask learned.
type Outcome struct {
	RequestID string
	Decision  string // the optionId chosen, or Deny
	Reason    string
	// Revision is the revision of the request the decision was given to:
	// 0 for the approval first shown, n for its n-th replacement (see
	// Call.Revise). What runs is what that revision showed.
	Revision int
}

// Allowed reports whether the outcome lets the call run.
func (o Outcome) Allowed() bool {
	switch o.Decision {
	case AllowOnce, AllowAlways, AllowAlwaysPermanent, Trust:
		return true
	}
	return false
}

// Grants reports whether the outcome asks for a standing grant, and whether
// that grant is kept for every session.
func (o Outcome) Grants() (grant, permanent bool) {
	return o.Decision == AllowAlways || o.Decision == AllowAlwaysPermanent, o.Decision == AllowAlwaysPermanent
}

// Ask puts req to the person and waits. It returns a deny when ctx ends
// first (a cancelled turn) or the broker is closed.
func (g *Gate) Ask(ctx context.Context, req Request) Outcome {
	return g.ask(ctx, req, nil)
}

// ask is Ask with the request's approval replaced while it waits by each
// one revise brings (same options, same id, the next revision).
func (g *Gate) ask(ctx context.Context, req Request, revise <-chan tool.Approval) Outcome {
	req = forDisplay(req)
	if req.Options == nil {
		req.Options = OptionsFor(req)
	}
	pol := ask.Policy{Refusal: Deny, Check: func(a ask.Answer) (ask.Answer, error) {
		if !validFor(req, a.Choice) {
			return a, fmt.Errorf("decision %q is %w", a.Choice, ErrNotAnOption)
		}
		return ask.Answer{Choice: a.Choice}, nil
	}}
	if revise != nil {
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		bodies := make(chan any)
		go func() {
			for {
				var ap tool.Approval
				var ok bool
				select {
				case ap, ok = <-revise:
				case <-actx.Done():
					return
				}
				if !ok {
					return
				}
				next := req
				next.Approval = ap
				select {
				case bodies <- forDisplay(next):
				case <-actx.Done():
					return
				}
			}
		}()
		pol.Revise = bodies
	}
	q, a := g.broker.Ask(ctx, ask.Question{Kind: ask.KindApproval, SessionID: req.SessionID, Ancestors: req.Parent.Sessions(), Body: req}, pol)
	return Outcome{RequestID: q.ID, Decision: a.Choice, Reason: a.Reason, Revision: a.Revision}
}

// Respond records the person's decision (an optionId) for a pending request
// as it was first shown (revision 0): what a front end whose requests are
// never replaced sends.
func (g *Gate) Respond(requestID, decision string) error {
	return g.Answer(requestID, 0, decision)
}

// Answer records the person's decision for a pending request, given to the
// revision of it they saw; an older revision than the one shown now is
// ask.ErrOutdated and leaves it open.
func (g *Gate) Answer(requestID string, revision int, decision string) error {
	return g.broker.Respond(ask.KindApproval, requestID, ask.Answer{Choice: decision, Revision: revision})
}

func validFor(req Request, decision string) bool {
	for _, o := range req.Options {
		if o.OptionID == decision {
			return true
		}
	}
	return false
}

// OptionsFor lists the choices a request offers. "Always allow" is offered
// only where a grant scope exists and the call is not one that must always
// ask; it comes twice, for this session and for every session, each option
// saying which.
func OptionsFor(req Request) []Option {
	deny := Option{OptionID: Deny, Name: "Deny", Kind: OptionRejectOnce}
	switch req.Kind {
	case KindLaunch:
		return []Option{{OptionID: AllowOnce, Name: "Allow once", Kind: OptionAllowOnce},
			{OptionID: Trust, Name: "Trust server", Kind: OptionAllowAlways}, deny}
	case KindProjectTrust:
		return []Option{{OptionID: Trust, Name: "Trust them", Kind: OptionAllowAlways},
			{OptionID: Deny, Name: "Not now (none of them runs or is read)", Kind: OptionRejectOnce}}
	case KindMCPSkill:
		return []Option{{OptionID: AllowOnce, Name: "Load it once", Kind: OptionAllowOnce},
			{OptionID: Trust, Name: "Trust this skill", Kind: OptionAllowAlways}, deny}
	case KindAcknowledge:
		return []Option{{OptionID: AllowOnce, Name: "Acknowledge and continue", Kind: OptionAllowOnce},
			{OptionID: Deny, Name: "Not now", Kind: OptionRejectOnce}}
	}
	opts := []Option{{OptionID: AllowOnce, Name: "Allow once", Kind: OptionAllowOnce}}
	if req.Grant != nil && !req.AlwaysAsk {
		opts = append(opts,
			Option{OptionID: AllowAlways, Name: req.Grant.Label + " in this session", Kind: OptionAllowAlways},
			Option{OptionID: AllowAlwaysPermanent, Name: req.Grant.Label + " in every session", Kind: OptionAllowAlways})
	}
	return append(opts, deny)
}
