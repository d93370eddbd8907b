package ask

import (
	"context"
	"sync"
	"time"
)

// The person's time is not a server's. A limit on how long something may
// take (an MCP call's timeout) is set with WithTimeout, and its clock stops
// while the person is asked something on its behalf: every Ask with a
// context derived from it holds the clock, and so does Hold (for a question
// that arrives on another context, such as an MCP server's elicitation/create
// during the call). The clock goes on when the answer is in.

// clock is a time limit that can be held. It fires once, when it has run
// for its whole budget while not held.
type clock struct {
	parent *clock // the limit this one was set inside, held with it
	fire   func() // ends the context

	// mu guards left, since, holds and timer.
	mu    sync.Mutex
	left  time.Duration // budget not yet used, as of since
	since time.Time     // when it last started running; zero while held
	holds int
	timer *time.Timer // nil while held
	done  bool
}

type clockKey struct{}

// WithTimeout is context.WithTimeout whose clock stops while the person is
// asked something for it (see Hold). When the time is up the context ends
// with cause context.DeadlineExceeded; it carries no Deadline, since when
// that is depends on the person.
func WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &clock{left: d, since: time.Now()}
	c.parent, _ = parent.Value(clockKey{}).(*clock)
	c.fire = func() { cancel(context.DeadlineExceeded) }
	c.mu.Lock()
	c.timer = time.AfterFunc(d, c.expire)
	c.mu.Unlock()
	stop := context.AfterFunc(ctx, c.stop)
	return context.WithValue(ctx, clockKey{}, c), func() {
		stop()
		c.stop()
		cancel(context.Canceled)
	}
}

// Hold stops the clocks of ctx (its WithTimeout and every one it was set
// inside) until resume is called. Holds nest; resume may be called more
// than once. A ctx without a clock holds nothing.
func Hold(ctx context.Context) (resume func()) {
	c, _ := ctx.Value(clockKey{}).(*clock)
	var held []*clock
	for ; c != nil; c = c.parent {
		c.hold()
		held = append(held, c)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			for _, c := range held {
				c.resume()
			}
		})
	}
}

func (c *clock) hold() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds++
	if c.holds > 1 || c.done {
		return
	}
	switch {
	case c.timer == nil:
	case c.timer.Stop():
		c.left -= time.Since(c.since)
	default:
		c.left = 0 // it was firing: the time is up, and stays up after the hold
	}
	c.timer, c.since = nil, time.Time{}
}

func (c *clock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds--
	if c.holds > 0 || c.done {
		return
	}
	c.since = time.Now()
	c.timer = time.AfterFunc(max(c.left, 0), c.expire)
}

func (c *clock) expire() {
	c.mu.Lock()
	if c.done || c.holds > 0 {
		// Held (or stopped) while the timer was firing: the hold left it
		// no time, and resume fires it.
		c.mu.Unlock()
		return
	}
	c.done = true
	c.mu.Unlock()
	c.fire()
}

// stop ends the clock without firing it (the context ended otherwise).
func (c *clock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.timer != nil {
		c.timer.Stop()
	}
}
