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
)

// Question is one thing the person is asked.
type Question struct {
	ID        string // set by Ask
	Kind      Kind
	SessionID string // "" for a question of no session (a server launch, a sign-in)
	// Body is what the front end shows (for example a permission.Request);
	// the broker never looks inside.
	Body any
}

// Answer is how a question ended.
type Answer struct {
	// Choice is what was picked: an approval's optionId, an elicitation's
	// action (accept, decline, cancel).
	Choice string
	// Content is an accepted form's content, as the Policy's Check kept it.
	Content map[string]any
	Reason  string
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
}

// Notifier carries questions and resolutions to the person. It is called
// outside the broker's lock, once per question each, in that order.
type Notifier interface {
	Asked(Question)
	Resolved(Question, Answer)
}

// ErrUnknown is returned by Respond for an id that is not pending.
var ErrUnknown = errors.New("no pending request with that id (already resolved?)")

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
// question is then refused with ReasonCancelled) or for Close. The returned
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

	b.n.Asked(q)
	var a Answer
	select {
	case a = <-p.answer:
	case <-ctx.Done():
		a = b.settle(p, Answer{Choice: pol.Refusal, Reason: ReasonCancelled})
	}
	b.n.Resolved(q, a)
	return q, a
}

// settle removes p and returns fallback, unless someone answered first:
// then that answer stands.
func (b *Broker) settle(p *pending, fallback Answer) Answer {
	b.mu.Lock()
	if b.pend[p.q.ID] == p {
		delete(b.pend, p.q.ID)
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
	if p.pol.Check != nil {
		kept, err := p.pol.Check(a)
		if err != nil {
			return err
		}
		a = kept
	}
	a.Reason = ReasonPerson
	delete(b.pend, id)
	p.answer <- a
	return nil
}

// RefuseAll refuses every pending question (of one session, or all when
// sessionID is "") for reason.
func (b *Broker) RefuseAll(sessionID, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refuseLocked(sessionID, reason)
}

func (b *Broker) refuseLocked(sessionID, reason string) {
	for id, p := range b.pend {
		if sessionID == "" || p.q.SessionID == sessionID {
			delete(b.pend, id)
			p.answer <- Answer{Choice: p.pol.Refusal, Reason: reason}
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
// session and those of no session (a server launch, a sign-in), which any
// editor may answer.
func (b *Broker) Pending(sessionID string) []Question {
	b.mu.Lock()
	var ps []*pending
	for _, p := range b.pend {
		if p.q.SessionID == "" || p.q.SessionID == sessionID {
			ps = append(ps, p)
		}
	}
	b.mu.Unlock()
	sort.Slice(ps, func(i, j int) bool { return ps[i].seq < ps[j].seq })
	out := make([]Question, len(ps))
	for i, p := range ps {
		out[i] = p.q
	}
	return out
}
