package model

import (
	"encoding/json"
	"sync"
)

// maxCallExtras bounds the calls whose extra_content a client keeps (a
// Gemini signature is a few kilobytes): far more than the calls of one
// turn, where the service checks them.
const maxCallExtras = 256

// callExtras keeps, by call id, what a Chat Completions service streamed
// with a tool call that it wants back, to send it back with that call and
// only to that service (one per client, so per model): the extra_content
// it hung on the call, and the reasoning_details of the answer the call
// ended (reasoningDetails says why, kept by the answer's first call). Gemini's
// OpenAI-compatible endpoint puts a Gemini 3 model's thought signature
// there ({"google":{"thought_signature":"..."}}) and refuses the next
// request of the turn without it (HTTP 400, "Function call is missing a
// thought_signature in functionCall parts"): every tool call would end its
// turn. The services check the calls of the current turn only, so the
// client's memory (not the session file) is enough: a kin started afresh
// begins a new turn.
type callExtras struct {
	mu    sync.Mutex
	byID  map[string]callExtra
	order []string // ids, oldest first
}

// callExtra is what came with one call: its extra_content, and the
// reasoning_details of its answer (on the answer's first call only).
type callExtra struct {
	content, details json.RawMessage
}

// put keeps e for the call id, dropping the oldest past maxCallExtras.
func (c *callExtras) put(id string, e callExtra) {
	if c == nil || id == "" || (len(e.content) == 0 && len(e.details) == 0) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]callExtra{}
	}
	if _, ok := c.byID[id]; !ok {
		c.order = append(c.order, id)
	}
	c.byID[id] = e
	for len(c.order) > maxCallExtras {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
}

// get is what put kept for the call id.
func (c *callExtras) get(id string) callExtra {
	if c == nil {
		return callExtra{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}
