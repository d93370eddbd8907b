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
)

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

	Options []Option
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
	q, a := g.broker.Ask(ctx, ask.Question{Kind: ask.KindApproval, SessionID: req.SessionID, Body: req}, pol)
	return Outcome{RequestID: q.ID, Decision: a.Choice, Reason: a.Reason}
}

// Respond records the person's decision (an optionId) for a pending request.
func (g *Gate) Respond(requestID, decision string) error {
	return g.broker.Respond(ask.KindApproval, requestID, ask.Answer{Choice: decision})
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
