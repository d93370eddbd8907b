package model

import (
	"encoding/json"
	"sync"
)

// maxCallExtras bounds the calls whose extra_content a client keeps (a
// Gemini signature is a few kilobytes): far more than the calls of one
// turn, where the service checks them.
const maxCallExtras = 256

// callExtras keeps, by call id, the extra_content a Chat Completions
// service hung on a tool call it streamed, to send it back on that call
// and only to that service (one per client, so per model). Gemini's
// OpenAI-compatible endpoint puts a Gemini 3 model's thought signature
// there ({"google":{"thought_signature":"..."}}) and refuses the next
// request of the turn without it (HTTP 400, "Function call is missing a
// thought_signature in functionCall parts"): every tool call would end its
// turn. The service checks the calls of the current turn only, so the
// client's memory (not the session file) is enough: a kin started afresh
// begins a new turn.
type callExtras struct {
	mu    sync.Mutex
	byID  map[string]json.RawMessage
	order []string // ids, oldest first
}

// put keeps raw for the call id, dropping the oldest past maxCallExtras.
func (c *callExtras) put(id string, raw json.RawMessage) {
	if c == nil || id == "" || len(raw) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]json.RawMessage{}
	}
	if _, ok := c.byID[id]; !ok {
		c.order = append(c.order, id)
	}
	c.byID[id] = raw
	for len(c.order) > maxCallExtras {
		delete(c.byID, c.order[0])
		c.order = c.order[1:]
	}
}

// get is what put kept for the call id.
func (c *callExtras) get(id string) (json.RawMessage, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, ok := c.byID[id]
	return raw, ok
}
