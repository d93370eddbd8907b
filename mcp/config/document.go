package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// serversKey is the top-level member holding the server entries.
const serversKey = "mcpServers"

// member is one key of a JSON object with its value kept verbatim.
type member struct {
	key string
	raw json.RawMessage
}

// document is an mcp.json file as an ordered tree: the top-level members
// other than mcpServers and the server entries are kept as raw JSON, so a
// rewrite reproduces everything it did not change.
type document struct {
	top     []member // top-level members in order; mcpServers is a placeholder
	servers []member // mcpServers entries in order, names unique
	dups    []string // server names that appeared more than once (last wins)
}

// parseDocument parses an mcp.json file. Empty (or blank) content is an empty
// document. The top level and mcpServers (when present and not null) must be
// objects; otherwise the file is malformed.
func parseDocument(data []byte) (*document, error) {
	doc := &document{}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	top, err := parseObject(data)
	if err != nil {
		return nil, err
	}
	seenServers := false
	for _, m := range top {
		if m.key != serversKey {
			doc.top = append(doc.top, m)
			continue
		}
		if seenServers {
			return nil, errors.New(`"mcpServers" appears more than once`)
		}
		seenServers = true
		doc.top = append(doc.top, member{key: serversKey})
		if string(bytes.TrimSpace(m.raw)) == "null" {
			continue
		}
		entries, err := parseObject(m.raw)
		if err != nil {
			return nil, fmt.Errorf(`"mcpServers": %w`, err)
		}
		for _, e := range entries {
			if i := doc.index(e.key); i >= 0 {
				doc.servers[i].raw = e.raw
				doc.dups = append(doc.dups, e.key)
				continue
			}
			doc.servers = append(doc.servers, e)
		}
	}
	return doc, nil
}

// parseObject splits a JSON object into its members, in order.
func parseObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err)
		}
		out = append(out, member{key: key, raw: raw})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid JSON: data after the top-level value")
	}
	return out, nil
}

// syntaxError words a decoding error without quoting file content.
func syntaxError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d", se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: unexpected end of file")
	}
	return errors.New("invalid JSON")
}

// index returns the position of the named server entry, or -1.
func (d *document) index(name string) int {
	for i, m := range d.servers {
		if m.key == name {
			return i
		}
	}
	return -1
}

// entry returns the raw JSON of the named server entry.
func (d *document) entry(name string) (json.RawMessage, bool) {
	if i := d.index(name); i >= 0 {
		return d.servers[i].raw, true
	}
	return nil, false
}

// set replaces the named entry in place, or appends it.
func (d *document) set(name string, raw json.RawMessage) {
	if i := d.index(name); i >= 0 {
		d.servers[i].raw = raw
		return
	}
	d.servers = append(d.servers, member{key: name, raw: raw})
}

// remove deletes the named entry.
func (d *document) remove(name string) {
	if i := d.index(name); i >= 0 {
		d.servers = append(d.servers[:i], d.servers[i+1:]...)
	}
}

// marshal renders the document with two-space indentation. Raw values are
// re-indented but otherwise copied byte for byte (no HTML escaping, string
// escapes kept as written).
func (d *document) marshal() ([]byte, error) {
	top := d.top
	hasServers := false
	for _, m := range top {
		if m.key == serversKey {
			hasServers = true
		}
	}
	if !hasServers {
		top = append([]member{{key: serversKey}}, top...)
	}
	var b bytes.Buffer
	b.WriteString("{")
	for i, m := range top {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		writeKey(&b, m.key)
		if m.key == serversKey {
			if err := d.marshalServers(&b); err != nil {
				return nil, err
			}
			continue
		}
		if err := json.Indent(&b, bytes.TrimSpace(m.raw), "  ", "  "); err != nil {
			return nil, fmt.Errorf("%q: %w", m.key, err)
		}
	}
	if len(top) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

func (d *document) marshalServers(b *bytes.Buffer) error {
	if len(d.servers) == 0 {
		b.WriteString("{}")
		return nil
	}
	b.WriteString("{")
	for i, m := range d.servers {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    ")
		writeKey(b, m.key)
		if err := json.Indent(b, bytes.TrimSpace(m.raw), "    ", "  "); err != nil {
			return fmt.Errorf("server %q: %w", m.key, err)
		}
	}
	b.WriteString("\n  }")
	return nil
}

// writeKey writes `"key": ` without HTML escaping.
func writeKey(b *bytes.Buffer, key string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(key)     // a string always encodes
	b.Truncate(b.Len() - 1) // drop Encode's newline
	b.WriteString(": ")
}
