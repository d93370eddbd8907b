package connect

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
)

// PropertyOrder keeps the order in which a server wrote the properties of
// the forms it asked for. A form's questions are its requestedSchema's
// properties, and the server's order is the order to ask them in (a form's
// one required field may be its first of thirteen); but the SDK hands the
// schema over as a map, which has none. So every line the server sends is
// looked at on its way in (a stdio message, a line of an HTTP body or
// event stream): where a "requestedSchema" object has "properties", their
// names are kept in the order written, keyed by the set of names, for
// Order to give back. It only watches: the SDK reads every message as it
// would without it, and a line that is not JSON, or is cut, is ignored.
type PropertyOrder struct {
	// mu guards byNames and recent.
	mu      sync.Mutex
	byNames map[string][]string // sorted names, joined -> the order written
	recent  []string            // keys, oldest first
}

// maxOrders bounds the forms remembered: enough for every question of a
// call's input-required result, with room to spare.
const maxOrders = 64

// maxOrderDepth bounds how deep a message is searched for a schema (an
// input-required result's is at result.inputRequests.<id>.params).
const maxOrderDepth = 16

func orderKey(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	return strings.Join(s, "\x00")
}

// Order returns names in the order the server last wrote a form with
// exactly these properties, or nil when it never sent one.
func (o *PropertyOrder) Order(names []string) []string {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.byNames[orderKey(names)])
}

// observe looks at one line the server sent.
func (o *PropertyOrder) observe(line []byte) {
	if o == nil || !bytes.Contains(line, []byte(`"requestedSchema"`)) {
		return
	}
	line = bytes.TrimSpace(line)
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok { // an event stream's data line
		line = bytes.TrimSpace(rest)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	_ = o.walk(dec, 0) // a line that is not (whole) JSON holds nothing usable
}

// walk reads one JSON value from dec, recording the property order of every
// "requestedSchema" object in it.
func (o *PropertyOrder) walk(dec *json.Decoder, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	for dec.More() {
		if d == '[' {
			if err := o.skipOrWalk(dec, depth); err != nil {
				return err
			}
			continue
		}
		k, err := dec.Token()
		if err != nil {
			return err
		}
		if k == "requestedSchema" {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			o.record(raw)
			continue
		}
		if err := o.skipOrWalk(dec, depth); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func (o *PropertyOrder) skipOrWalk(dec *json.Decoder, depth int) error {
	if depth >= maxOrderDepth {
		var skip json.RawMessage
		return dec.Decode(&skip)
	}
	return o.walk(dec, depth+1)
}

// record keeps the order of schema's "properties", when it has them.
func (o *PropertyOrder) record(schema json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return
		}
		if k != "properties" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return
		}
		var names []string
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return
			}
			if s, ok := name.(string); ok && !slices.Contains(names, s) {
				names = append(names, s)
			}
		}
		o.keep(names)
		return
	}
}

func (o *PropertyOrder) keep(names []string) {
	if len(names) == 0 {
		return
	}
	key := orderKey(names)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.byNames == nil {
		o.byNames = map[string][]string{}
	}
	if _, ok := o.byNames[key]; ok {
		o.recent = slices.DeleteFunc(o.recent, func(k string) bool { return k == key })
	}
	o.byNames[key] = names
	o.recent = append(o.recent, key)
	if len(o.recent) > maxOrders {
		delete(o.byNames, o.recent[0])
		o.recent = o.recent[1:]
	}
}

// orderBody is an HTTP response body whose lines the PropertyOrder sees
// as they are read. A line longer than MaxMessage is not looked at.
type orderBody struct {
	rc    io.ReadCloser
	order *PropertyOrder
	line  []byte
	long  bool // the current line is over MaxMessage: skipped
}

func (b *orderBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	for chunk := p[:n]; len(chunk) > 0; {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if !b.long {
			if len(b.line)+len(part) > MaxMessage {
				b.line, b.long = nil, true
			} else {
				b.line = append(b.line, part...)
			}
		}
		if i < 0 {
			break
		}
		if !b.long {
			b.order.observe(b.line)
		}
		b.line, b.long = b.line[:0], false
		chunk = chunk[i+1:]
	}
	if err != nil && len(b.line) > 0 && !b.long { // a body that ends without a line end
		b.order.observe(b.line)
		b.line = b.line[:0]
	}
	return n, err
}

func (b *orderBody) Close() error { return b.rc.Close() }
