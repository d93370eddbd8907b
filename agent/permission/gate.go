// Package permission is the one gate every call passes before it may act:
// it asks the person through the editor and waits for a decision, and it
// keeps the standing "always allow" grants.
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
	"sync"
	"sync/atomic"

	"github.com/kin-dev/kin/agent/tool"
)

// Decisions, which are also the optionIds editors send back.
const (
	AllowOnce   = "allow_once"
	AllowAlways = "allow_always"
	Deny        = "deny"
	Trust       = "trust"
)

// Request kinds.
const (
	KindToolCall    = "tool_call"
	KindLaunch      = "server_launch"
	KindAcknowledge = "acknowledge_unknown"
)

// Reasons a request was resolved.
const (
	ReasonPerson       = "person"
	ReasonGrant        = "grant"
	ReasonCancelled    = "cancelled"
	ReasonDisconnected = "disconnected"
	ReasonShutdown     = "shutdown"
)

// Option is one choice, in the Agent Client Protocol's shape.
type Option struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once, allow_always, reject_once
}

// Request is an approval/request notification's params.
type Request struct {
	RequestID string    `json:"requestId"`
	SessionID string    `json:"sessionId,omitempty"`
	TurnID    string    `json:"turnId,omitempty"`
	CallID    string    `json:"callId,omitempty"`
	Kind      string    `json:"kind"`
	ToolName  string    `json:"tool,omitempty"`
	ToolKind  tool.Kind `json:"toolKind,omitempty"`
	tool.Approval
	// For server launches.
	Transport string `json:"transport,omitempty"`
	Scope     string `json:"scope,omitempty"`

	Options []Option `json:"options"`
}

// Resolution is an approval/resolved notification's params.
type Resolution struct {
	RequestID string `json:"requestId"`
	SessionID string `json:"sessionId,omitempty"`
	Decision  string `json:"decision"`
	Reason    string `json:"reason"`
}

// Notifier carries requests and resolutions to the editor.
type Notifier interface {
	ApprovalRequested(Request)
	ApprovalResolved(Resolution)
}

type reply struct {
	decision  string
	permanent bool
	reason    string
}

type pending struct {
	req   Request
	reply chan reply // buffered 1: the first answer wins
}

// Gate asks and waits.
type Gate struct {
	notify Notifier
	grants *Grants
	seq    atomic.Uint64

	// mu guards pending.
	mu      sync.Mutex
	pending map[string]*pending
}

// NewGate returns a gate that reports through n and keeps grants in g.
func NewGate(n Notifier, g *Grants) *Gate {
	return &Gate{notify: n, grants: g, pending: map[string]*pending{}}
}

// Grants returns the gate's grant store.
func (g *Gate) Grants() *Grants { return g.grants }

// ErrUnknownRequest is returned by Respond for an id that is not pending.
var ErrUnknownRequest = errors.New("no pending request with that id (already resolved?)")

// Outcome is what Ask learned.
type Outcome struct {
	RequestID string
	Decision  string
	Reason    string
	Permanent bool
}

// Allowed reports whether the outcome lets the call run.
func (o Outcome) Allowed() bool {
	return o.Decision == AllowOnce || o.Decision == AllowAlways || o.Decision == Trust
}

// Ask sends req to the editor and waits for the person. It returns a deny
// when ctx ends first (a cancelled turn) or the gate is closed.
func (g *Gate) Ask(ctx context.Context, req Request) Outcome {
	req = forDisplay(req)
	req.RequestID = fmt.Sprintf("ap_%d", g.seq.Add(1))
	if req.Options == nil {
		req.Options = OptionsFor(req)
	}
	p := &pending{req: req, reply: make(chan reply, 1)}
	g.mu.Lock()
	g.pending[req.RequestID] = p
	g.mu.Unlock()
	g.notify.ApprovalRequested(req)

	var r reply
	select {
	case r = <-p.reply:
	case <-ctx.Done():
		r = reply{decision: Deny, reason: ReasonCancelled}
	}
	g.mu.Lock()
	delete(g.pending, req.RequestID)
	g.mu.Unlock()
	if !validFor(req, r.decision) {
		r.decision = Deny
	}
	g.notify.ApprovalResolved(Resolution{RequestID: req.RequestID, SessionID: req.SessionID, Decision: r.decision, Reason: r.reason})
	return Outcome{RequestID: req.RequestID, Decision: r.decision, Reason: r.reason, Permanent: r.permanent}
}

// Respond records the person's decision for a pending request.
func (g *Gate) Respond(requestID, decision string, permanent bool) error {
	g.mu.Lock()
	p, ok := g.pending[requestID]
	g.mu.Unlock()
	if !ok {
		return ErrUnknownRequest
	}
	if !validFor(p.req, decision) {
		return fmt.Errorf("decision %q is not one of this request's options", decision)
	}
	select {
	case p.reply <- reply{decision: decision, permanent: permanent, reason: ReasonPerson}:
		return nil
	default:
		return ErrUnknownRequest
	}
}

// DenyAll resolves every pending request (of one session, or all when
// sessionID is "") as denied for reason.
func (g *Gate) DenyAll(sessionID, reason string) {
	g.mu.Lock()
	var ps []*pending
	for _, p := range g.pending {
		if sessionID == "" || p.req.SessionID == sessionID {
			ps = append(ps, p)
		}
	}
	g.mu.Unlock()
	for _, p := range ps {
		select {
		case p.reply <- reply{decision: Deny, reason: reason}:
		default:
		}
	}
}

// Pending lists requests still waiting (of one session, or all).
func (g *Gate) Pending(sessionID string) []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Request
	for _, p := range g.pending {
		if sessionID == "" || p.req.SessionID == sessionID {
			out = append(out, p.req)
		}
	}
	return out
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
// ask.
func OptionsFor(req Request) []Option {
	deny := Option{OptionID: Deny, Name: "Deny", Kind: "reject_once"}
	switch req.Kind {
	case KindLaunch:
		return []Option{{OptionID: AllowOnce, Name: "Allow once", Kind: "allow_once"},
			{OptionID: Trust, Name: "Trust server", Kind: "allow_always"}, deny}
	case KindAcknowledge:
		return []Option{{OptionID: AllowOnce, Name: "Acknowledge and continue", Kind: "allow_once"},
			{OptionID: Deny, Name: "Not now", Kind: "reject_once"}}
	}
	opts := []Option{{OptionID: AllowOnce, Name: "Allow once", Kind: "allow_once"}}
	if req.Grant != nil && !req.AlwaysAsk {
		opts = append(opts, Option{OptionID: AllowAlways, Name: req.Grant.Label, Kind: "allow_always"})
	}
	return append(opts, deny)
}
