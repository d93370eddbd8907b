package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// LookupEnv resolves a variable for ${VAR} expansion, like os.LookupEnv.
type LookupEnv func(name string) (string, bool)

// segment is a literal run of text or one ${NAME} / ${NAME:-default} reference.
type segment struct {
	lit    string
	name   string // non-empty for a reference
	def    string
	hasDef bool
}

// parseRefs splits s into literal text and ${...} references. A "$" not
// followed by "{" is literal. A default runs to the first "}" and is not
// itself expanded.
func parseRefs(s string) ([]segment, error) {
	var out []segment
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			if s != "" {
				out = append(out, segment{lit: s})
			}
			return out, nil
		}
		if i > 0 {
			out = append(out, segment{lit: s[:i]})
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, errors.New(`unterminated "${"`)
		}
		body := s[i+2 : i+end]
		ref := segment{name: body}
		if n, d, ok := strings.Cut(body, ":-"); ok {
			ref = segment{name: n, def: d, hasDef: true}
		}
		if !validVarName(ref.name) {
			return nil, errors.New(`invalid variable reference (want ${NAME} or ${NAME:-default})`)
		}
		out = append(out, ref)
		s = s[i+end+1:]
	}
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expander expands references with a lookup and collects problems by field.
// Problems name variables and fields, never values.
type expander struct {
	lookup   LookupEnv
	problems []string
	unset    string // what an unset variable's problem adds (project entries: the secrets file)
	// withheld are variables no server gets (kin's model keys).
	withheld []string
}

func newExpander(lookup LookupEnv) *expander {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return &expander{lookup: lookup}
}

// expand resolves s. ${NAME:-default} uses default when NAME is unset or
// empty; ${NAME} with NAME unset is a problem (NAME set but empty is fine).
func (x *expander) expand(field, s string) string {
	segs, err := parseRefs(s)
	if err != nil {
		x.problems = append(x.problems, fmt.Sprintf("%s: %v", field, err))
		return ""
	}
	var b strings.Builder
	for _, seg := range segs {
		if seg.name == "" {
			b.WriteString(seg.lit)
			continue
		}
		if slices.Contains(x.withheld, seg.name) {
			x.problems = append(x.problems, fmt.Sprintf("environment variable %s holds one of kin's model keys, which kin never gives an MCP server (used in %s); give the server a variable of its own", seg.name, field))
			continue
		}
		v, ok := x.lookup(seg.name)
		switch {
		case seg.hasDef && v == "":
			b.WriteString(seg.def)
		case ok:
			b.WriteString(v)
		default:
			x.problems = append(x.problems, fmt.Sprintf("environment variable %s is not set (used in %s)%s", seg.name, field, x.unset))
		}
	}
	return b.String()
}

func (x *expander) list(field string, in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = x.expand(fmt.Sprintf("%s[%d]", field, i), s)
	}
	return out
}

func (x *expander) dict(field string, in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, k := range sortedKeys(in) {
		out[k] = x.expand(field+"."+k, in[k])
	}
	return out
}

// err joins the collected problems, or returns nil.
func (x *expander) err() error {
	if len(x.problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(x.problems, "; "))
}

// showRefs renders s with every reference written as ${NAME}: what a person
// may see instead of the resolved value (defaults are dropped too, as a
// default may itself be a secret). Unparseable text is fully masked.
func showRefs(s string) string {
	segs, err := parseRefs(s)
	if err != nil {
		return Mask
	}
	var b strings.Builder
	for _, seg := range segs {
		if seg.name == "" {
			b.WriteString(seg.lit)
		} else {
			b.WriteString("${" + seg.name + "}")
		}
	}
	return b.String()
}

// hasRefs reports whether s contains a ${...} reference (or a broken one).
func hasRefs(s string) bool { return strings.Contains(s, "${") }
