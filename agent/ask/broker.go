// Package ask is where kin waits for a person. Every question kin puts to
// the person (an approval, a form or a link an MCP server sends, a sign-in)
// goes through one Broker, which numbers it, keeps it pending so that a
// reloaded editor can show it again, and ends it with exactly one
// resolution: the person's answer, or a refusal given on their behalf when
// the question's context ends (a cancelled turn), the editor goes away or
// kin shuts down.
//
// It knows nothing of JSON-RPC (package rpc turns questions and resolutions
// into notifications) and nothing of what is asked: a question's Body is the
// asker's, and the asker's Policy says which answers are acceptable.
//
// It must never answer for the person (a question nobody answered is
// refused) and never leave a question waiting: after Close every pending
// question is refused and new ones are refused at once.
package ask

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Kind is what a question is; it decides the id space ("ap_1", "el_1").
type Kind string

// Kinds.
const (
	KindApproval    Kind = "approval"
	KindElicitation Kind = "elicitation"
)

// Reasons a question was resolved.
const (
	ReasonPerson       = "person"       // the person answered
	ReasonCancelled    = "cancelled"    // its context ended (the turn was cancelled)
	ReasonDisconnected = "disconnected" // the editor went away
	ReasonShutdown     = "shutdown"     // kin shut down
	// ReasonCallEnded: the tool call the question was asked for ended
	// without it (it failed, or the server answered it without waiting).
	ReasonCallEnded = "call_ended"
	// ReasonServerGone: the MCP server that asked stopped, or its
	// connection was lost.
	ReasonServerGone = "server_gone"
)

// Ended is the cause to cancel a question's context with when what it was
// asked for is gone: the question is resolved with Reason instead of
// ReasonCancelled.
type Ended struct{ Reason string }

func (e *Ended) Error() string { return "the question is no longer asked: " + e.Reason }

// Of says whether the question is sessionID's: asked in it, or in a
// subagent's session working for it.
func (q Question) Of(sessionID string) bool {
	return q.SessionID == sessionID || slices.Contains(q.Ancestors, sessionID)
}

// Question is one thing the person is asked.
type Question struct {
	ID        string // set by Ask
	Kind      Kind
	SessionID string // "" for a question of no session (a server launch, a sign-in)
	// Ancestors are, for a subagent's question, the sessions the subagent
	// works for, nearest first, up to the person's: the question is
	// theirs too (Pending, RefuseAll), so an editor showing any of them
	// shows it (a grandchild's question was its parent subagent's only,
	// missing from the person's session).
	Ancestors []string
	// Body is what the front end shows (for example a permission.Request);
	// the broker never looks inside.
	Body any
	// Revision counts the times Body was replaced while the question
	// waited (Policy.Revise): 0 for the question as first asked.
	Revision int
}

// Answer is how a question ended.
type Answer struct {
	// Choice is what was picked: an approval's optionId, an elicitation's
	// action (accept, decline, cancel).
	Choice string
	// Content is an accepted form's content, as the Policy's Check kept it.
	Content map[string]any
	Reason  string
	// Revision is the revision of the question the answer was given to
	// (Question.Revision): an answer to one that was replaced since is
	// refused (ErrOutdated). A refusal on the person's behalf carries the
	// revision that was current.
	Revision int
}

// Policy is the asker's rule for its question.
type Policy struct {
	// Check vets an answer from the person and returns the one to keep
	// (normalised). An error says what is wrong; the question stays open.
	// nil accepts every answer.
	Check func(Answer) (Answer, error)
	// Refusal is the Choice given on the person's behalf when nobody
	// answered ("deny", "cancel").
	Refusal string
	// Revise, when set, brings new Bodies while the question waits (what
	// it shows changed: the file a diff was made from was typed into).
	// Each replaces the Body, takes the next Revision and is asked again
	// (Notifier.Asked) under the same ID; answers to the one before are
	// refused from then on. It is read until the question is resolved.
	Revise <-chan any
}

// Notifier carries questions and resolutions to the person. It is called
// outside the broker's lock: Asked once per question and once more per
// revision of it (the same ID, the next Revision), then Resolved once, in
// that order.
type Notifier interface {
	Asked(Question)
	Resolved(Question, Answer)
}

// ErrUnknown is returned by Respond for an id that is not pending.
var ErrUnknown = errors.New("no pending request with that id (already resolved?)")

// ErrOutdated is returned by Respond for an answer to a revision of the
// question that was replaced since: the person did not see what is asked
// now. The question stays open.
var ErrOutdated = errors.New("the question changed since it was shown")

type pending struct {
	q      Question
	pol    Policy
	seq    uint64
	answer chan Answer // buffered 1; written once, by whoever removed the entry from the map
}

// Broker numbers, keeps and resolves questions.
type Broker struct {
	n Notifier

	// mu guards seq, pend and closed.
	mu     sync.Mutex
	seq    map[Kind]uint64
	order  uint64
	pend   map[string]*pending
	closed string // the reason once Close ran
}

// New returns a broker that reports through n.
func New(n Notifier) *Broker {
	return &Broker{n: n, seq: map[Kind]uint64{}, pend: map[string]*pending{}}
}

func prefix(k Kind) string {
	switch k {
	case KindApproval:
		return "ap"
	case KindElicitation:
		return "el"
	}
	return string(k)
}

// Ask puts q to the person and waits for the answer, for ctx to end (the
// question is then refused with ReasonCancelled, or the Reason of an
// *Ended cause) or for Close. The clocks of ctx (WithTimeout) are held
// while it waits. The returned
// answer is the one the resolution carried. After Close it returns the
// refusal at once without asking.
func (b *Broker) Ask(ctx context.Context, q Question, pol Policy) (Question, Answer) {
	b.mu.Lock()
	if b.closed != "" {
		reason := b.closed
		b.mu.Unlock()
		return q, Answer{Choice: pol.Refusal, Reason: reason}
	}
	b.seq[q.Kind]++
	b.order++
	q.ID = fmt.Sprintf("%s_%d", prefix(q.Kind), b.seq[q.Kind])
	p := &pending{q: q, pol: pol, seq: b.order, answer: make(chan Answer, 1)}
	b.pend[q.ID] = p
	b.mu.Unlock()

	// The person's time does not count against a limit set for what asks
	// (an MCP call's timeout: see WithTimeout).
	resume := Hold(ctx)
	b.n.Asked(q)
	var a Answer
	revise := pol.Revise
wait:
	for {
		select {
		case a = <-p.answer:
			break wait
		case <-ctx.Done():
			reason := ReasonCancelled
			var e *Ended
			if errors.As(context.Cause(ctx), &e) {
				reason = e.Reason
			}
			a = b.settle(p, Answer{Choice: pol.Refusal, Reason: reason})
			break wait
		case body, ok := <-revise:
			if !ok {
				revise = nil
				continue
			}
			if rq, still := b.revise(p, body); still {
				b.n.Asked(rq)
			}
		}
	}
	resume()
	b.mu.Lock()
	q = p.q
	b.mu.Unlock()
	b.n.Resolved(q, a)
	return q, a
}

// revise replaces a pending question's Body with the next revision, and
// reports whether it is still pending (an answer may have come first).
func (b *Broker) revise(p *pending, body any) (Question, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pend[p.q.ID] != p {
		return Question{}, false
	}
	p.q.Body = body
	p.q.Revision++
	return p.q, true
}

// settle removes p and returns fallback, unless someone answered first:
// then that answer stands.
func (b *Broker) settle(p *pending, fallback Answer) Answer {
	b.mu.Lock()
	if b.pend[p.q.ID] == p {
		delete(b.pend, p.q.ID)
		fallback.Revision = p.q.Revision
		b.mu.Unlock()
		return fallback
	}
	b.mu.Unlock()
	return <-p.answer
}

// Respond answers a pending question of kind k for the person. An answer
// the question's Policy refuses is an error and leaves it open.
func (b *Broker) Respond(k Kind, id string, a Answer) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pend[id]
	if !ok || p.q.Kind != k {
		return ErrUnknown
	}
	if a.Revision != p.q.Revision {
		return fmt.Errorf("%w: the answer is to revision %d, and revision %d is shown now", ErrOutdated, a.Revision, p.q.Revision)
	}
	if p.pol.Check != nil {
		kept, err := p.pol.Check(a)
		if err != nil {
			return err
		}
		kept.Revision = a.Revision
		a = kept
	}
	a.Reason = ReasonPerson
	delete(b.pend, id)
	p.answer <- a
	return nil
}

// RefuseAll refuses every pending question (of one session and its
// subagents, or all when sessionID is "") for reason.
func (b *Broker) RefuseAll(sessionID, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refuseLocked(sessionID, reason)
}

// Refuse refuses one pending question for reason, as RefuseAll does, and
// reports whether it was still pending.
func (b *Broker) Refuse(id, reason string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pend[id]
	if !ok {
		return false
	}
	delete(b.pend, id)
	p.answer <- Answer{Choice: p.pol.Refusal, Reason: reason, Revision: p.q.Revision}
	return true
}

func (b *Broker) refuseLocked(sessionID, reason string) {
	for id, p := range b.pend {
		if sessionID == "" || p.q.Of(sessionID) {
			delete(b.pend, id)
			p.answer <- Answer{Choice: p.pol.Refusal, Reason: reason, Revision: p.q.Revision}
		}
	}
}

// Close refuses everything pending for reason, and every later question.
func (b *Broker) Close(reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed == "" {
		b.closed = reason
	}
	b.refuseLocked("", reason)
}

// Pending lists the questions still waiting, oldest first: those of one
// session (its subagents' included) and those of no session (a server
// launch, a sign-in), which any editor may answer.
func (b *Broker) Pending(sessionID string) []Question {
	type entry struct {
		q   Question
		seq uint64
	}
	b.mu.Lock()
	var es []entry
	for _, p := range b.pend {
		if p.q.SessionID == "" || p.q.Of(sessionID) {
			es = append(es, entry{p.q, p.seq}) // a copy: a revision replaces p.q
		}
	}
	b.mu.Unlock()
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	out := make([]Question, len(es))
	for i, e := range es {
		out[i] = e.q
	}
	return out
}
