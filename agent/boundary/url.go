package boundary

import (
	"regexp"
	"strings"
	"sync"
)

// Mask is what a secret is replaced with wherever kin shows or writes it.
const Mask = "●●●●"

// MaskURL renders a URL for display without its credentials: userinfo
// (user:password@) removed, every query value masked (?api-key=●●●●), and
// in a fragment only key=value values masked (an OAuth implicit grant's
// #access_token=●●●●; a plain #tool-calls is an anchor, not a secret, and
// stays). Text that is not a URL but holds an "@" is masked whole.
func MaskURL(s string) string { return MaskURLWith(s, nil) }

// MaskURLWith is MaskURL with show deciding what of each credential part
// (the userinfo, a query value, a fragment's value) is shown; nil shows
// none. A part show renders as Mask is hidden as MaskURL hides it (userinfo
// removed). The MCP configuration shows an entry's ${VAR} references this
// way: a variable's name is no secret, and it is what says which of your
// variables a server is sent.
func MaskURLWith(s string, show func(part string) string) string {
	if show == nil {
		show = func(string) string { return Mask }
	}
	frag := ""
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, frag = s[:i], "#"+maskPairs(s[i+1:], true, show)
	}
	query := ""
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, query = s[:i], "?"+maskPairs(s[i+1:], false, show)
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		auth, path := rest, ""
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			auth, path = rest[:j], rest[j:]
		}
		if j := strings.LastIndexByte(auth, '@'); j >= 0 {
			user := show(auth[:j])
			auth = auth[j+1:]
			if user != Mask {
				auth = user + "@" + auth
			}
		}
		s = s[:i+3] + auth + path
	} else if strings.ContainsRune(s, '@') {
		return Mask // not a URL kin understands: show nothing that could be a credential
	}
	return s + query + frag
}

// maskPairs masks the values of a query ("a=1&b" -> "a=●●●●&●●●●"); in a
// fragment (pairsOnly) a part without "=" is kept. show renders a value.
func maskPairs(q string, pairsOnly bool, show func(string) string) string {
	if pairsOnly && !strings.Contains(q, "=") {
		return q
	}
	var parts []string
	for _, p := range strings.Split(q, "&") {
		if k, v, ok := strings.Cut(p, "="); ok {
			parts = append(parts, k+"="+show(v))
		} else if p != "" {
			if pairsOnly {
				parts = append(parts, p)
			} else {
				parts = append(parts, show(p))
			}
		}
	}
	return strings.Join(parts, "&")
}

// urlToken is a URL inside text.
var urlToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`) })

// MaskURLs masks the URLs in text that may carry a credential (userinfo,
// a query, a key=value fragment).
func MaskURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlToken().ReplaceAllStringFunc(s, func(u string) string {
		if !strings.ContainsAny(u, "@?#") {
			return u
		}
		return MaskURL(u)
	})
}
