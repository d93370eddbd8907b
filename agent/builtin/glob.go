package builtin

import (
	"fmt"
	"path"
	"strings"
)

// glob is a compiled glob over '/'-separated relative paths: `*`, `?` and
// `[...]` within one path element (as path.Match), `**` across elements,
// `{a,b}` alternatives.
type glob struct {
	src  string
	alts [][]string // brace-expanded alternatives, split into elements
	// baseOnly: no '/' in the pattern, so it is matched against the file
	// name alone (used by search, like rg -g).
	baseOnly bool
}

func compileGlob(pattern string, baseOnly bool) (*glob, error) {
	pattern = strings.TrimPrefix(pattern, "./")
	if pattern == "" {
		return nil, fmt.Errorf("the glob is empty")
	}
	g := &glob{src: pattern, baseOnly: baseOnly && !strings.Contains(pattern, "/")}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	for _, a := range alts {
		elems := splitPattern(a)
		for _, e := range elems {
			if _, err := path.Match(e, ""); err != nil {
				return nil, fmt.Errorf("bad glob %q: %v", pattern, err)
			}
		}
		g.alts = append(g.alts, elems)
	}
	return g, nil
}

// match reports whether the relative path rel ('/'-separated) matches.
func (g *glob) match(rel string) bool {
	if g.baseOnly {
		base := rel[strings.LastIndexByte(rel, '/')+1:]
		for _, a := range g.alts {
			if ok, _ := path.Match(a[0], base); ok {
				return true
			}
		}
		return false
	}
	elems := strings.Split(rel, "/")
	for _, a := range g.alts {
		if matchSegments(a, elems) {
			return true
		}
	}
	return false
}

// splitPattern splits a pattern into elements, collapsing repeated "**".
func splitPattern(p string) []string {
	var out []string
	for _, e := range strings.Split(strings.Trim(p, "/"), "/") {
		if e == "" {
			continue
		}
		if e == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, e)
	}
	return out
}

// matchSegments matches pattern elements against path elements; "**"
// matches any number of elements, but a trailing "**" at least one.
//
// On a mismatch it goes back only to the last "**" and lets it take one
// element more (what an earlier "**" could take, the last one can take
// too, so no other is ever retried): time linear in the pattern times the
// path. Trying every way to spread the "**"s over the path was
// exponential, and a .gitignore rule of twelve "**/a" against a folder
// chain 40 deep kept list_dir and search from ever ending.
func matchSegments(pat, name []string) bool {
	p, n := 0, 0
	star, starN := -1, 0 // the last "**" met, and where its match ends
	for {
		if p < len(pat) && pat[p] == "**" {
			if p == len(pat)-1 && n < len(name) {
				return true // a trailing "**" takes the rest, at least one
			}
			if p < len(pat)-1 {
				star, starN = p, n
				p++
				continue
			}
		} else if p < len(pat) && n < len(name) {
			if ok, _ := path.Match(pat[p], name[n]); ok {
				p, n = p+1, n+1
				continue
			}
		} else if p == len(pat) && n == len(name) {
			return true
		}
		// a mismatch: the last "**" takes one element more
		if star < 0 || starN >= len(name) {
			return false
		}
		starN++
		p, n = star+1, starN
	}
}

// expandBraces expands {a,b} alternatives (nested too).
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("bad glob %q: unmatched }", p)
			}
			depth--
			if depth == 0 {
				var out []string
				for _, alt := range splitTopCommas(p[open+1 : i]) {
					rest, err := expandBraces(p[:open] + alt + p[i+1:])
					if err != nil {
						return nil, err
					}
					out = append(out, rest...)
				}
				if len(out) > 256 {
					return nil, fmt.Errorf("bad glob %q: too many {} alternatives", p)
				}
				return out, nil
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("bad glob %q: unmatched {", p)
	}
	return []string{p}, nil
}

func splitTopCommas(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
