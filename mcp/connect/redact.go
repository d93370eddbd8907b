package connect

import (
	"net/url"
	"sort"
	"strings"

	"github.com/kin-dev/kin/mcp/config"
)

// Redactor removes a server's secrets from text: every resolved header and
// env value, the resolved URL (replaced by its masked form) and the URL's
// credentials and query values.
type Redactor struct {
	pairs []string // old, new, old, new... for strings.Replacer, longest first
}

// minSecret is the shortest value treated as a secret: shorter ones ("1",
// "on", "echo") would mangle unrelated text (tool output included) and
// reveal little.
const minSecret = 8

// pair is one secret and what replaces it.
type pair struct{ old, new string }

// NewRedactor builds the Redactor for srv.
func NewRedactor(srv config.Server) *Redactor {
	var ps []pair
	add := func(old, new string) {
		if len(old) >= minSecret {
			ps = append(ps, pair{old, new})
		}
	}
	for _, v := range srv.Headers {
		add(v, config.Mask)
		// "Bearer abc": also hide the bare token.
		if _, tok, ok := strings.Cut(v, " "); ok {
			add(strings.TrimSpace(tok), config.Mask)
		}
	}
	for _, v := range srv.Env {
		add(v, config.Mask)
	}
	if srv.URL != "" {
		masked := srv.Display().Launch
		add(srv.URL, masked)
		if u, err := url.Parse(srv.URL); err == nil {
			if u.User != nil {
				add(u.User.String(), config.Mask)
				if p, ok := u.User.Password(); ok {
					add(p, config.Mask)
				}
			}
			add(u.RawQuery, config.Mask)
			for _, vs := range u.Query() {
				for _, v := range vs {
					add(v, config.Mask)
					add(url.QueryEscape(v), config.Mask)
				}
			}
		}
	}
	return fromPairs(ps)
}

// fromPairs orders ps longest secret first, so that a secret holding
// another is replaced whole, and lays them out for strings.Replacer.
func fromPairs(ps []pair) *Redactor {
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].old) > len(ps[j].old) })
	r := &Redactor{}
	for _, p := range ps {
		r.pairs = append(r.pairs, p.old, p.new)
	}
	return r
}

// With returns a Redactor that also hides each of secrets (a server's
// current OAuth tokens, which change while it runs), masked.
func (r *Redactor) With(secrets ...string) *Redactor {
	if len(secrets) == 0 {
		return r
	}
	var ps []pair
	if r != nil {
		for i := 0; i+1 < len(r.pairs); i += 2 {
			ps = append(ps, pair{r.pairs[i], r.pairs[i+1]})
		}
	}
	for _, v := range secrets {
		if len(v) >= minSecret {
			ps = append(ps, pair{v, config.Mask})
		}
	}
	return fromPairs(ps)
}

// String returns s with every secret replaced.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.pairs) == 0 {
		return s
	}
	return strings.NewReplacer(r.pairs...).Replace(s)
}

// Error returns err's message with every secret replaced ("" for nil).
func (r *Redactor) Error(err error) string {
	if err == nil {
		return ""
	}
	return r.String(err.Error())
}
