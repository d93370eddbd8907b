package chat

import "sync"

// note is one notification from the service.
type note struct {
	method string
	params []byte
}

// queue hands notifications from jsonrpc2's read loop to the UI goroutine.
// push never blocks (the read loop must keep reading, or responses to the
// UI's own requests could never arrive); ready is signalled when there is
// something to take.
type queue struct {
	ready chan struct{}

	mu    sync.Mutex
	items []note
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(n note) {
	q.mu.Lock()
	q.items = append(q.items, n)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns everything queued, in order of arrival.
func (q *queue) take() []note {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
