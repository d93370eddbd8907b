package config

import (
	"net/textproto"
	"strings"
)

// HeaderRefs are the variables the entry's headers send, as written: one
// "Header-Name: ${A}${B}" per header that references any (its literal text
// left out), sorted; nil for none, and for a server built without its
// entry (an ACP client's, whose values are literal). The trust boundary
// binds a launch to them (trust.Hash): a header's value may be rotated
// without asking again, but a header that starts sending another of your
// variables (a project's file that now says "Bearer ${GITHUB_TOKEN}") is
// another launch.
func (s Server) HeaderRefs() []string {
	if len(s.Raw) == 0 {
		return nil
	}
	e, err := decodeEntry(s.Raw)
	if err != nil {
		return nil
	}
	var out []string
	for _, k := range sortedKeys(e.headers) {
		segs, err := parseRefs(e.headers[k])
		if err != nil {
			// unreadable: Load refuses such an entry; say so rather than
			// let it pass as "no references"
			out = append(out, textproto.CanonicalMIMEHeaderKey(k)+": "+Mask)
			continue
		}
		var b strings.Builder
		for _, seg := range segs {
			if seg.name != "" {
				b.WriteString("${" + seg.name + "}")
			}
		}
		if b.Len() > 0 {
			out = append(out, textproto.CanonicalMIMEHeaderKey(k)+": "+b.String())
		}
	}
	return out
}
