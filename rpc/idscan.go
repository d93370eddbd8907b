package rpc

import "encoding/json"

// IDScan finds a message's request id in its bytes as they stream past,
// keeping none of them, as kin serve's framing does for a frame over
// MaxFrame: for kin acp's line framing, which skips a line over its limit
// and must still answer a request with its own id (answered with null, an
// editor never learns its request ended).
type IDScan struct{ sc bodyScan }

// Feed scans the next bytes of the message.
func (s *IDScan) Feed(p []byte) { s.sc.feed(p) }

// RequestID is the id to answer the message with: a request's own string
// or number, read so far, else nil (see bodyScan.requestID).
func (s *IDScan) RequestID() json.RawMessage { return s.sc.requestID() }
