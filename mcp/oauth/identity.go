package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/kin-dev/kin/mcp/config"
)

// secretWords mark a header as secret when its (lower-cased) name contains
// one of them. Secret headers are left out of the endpoint identity, so
// rotating a bearer header or an API key never strands an OAuth sign-in.
var secretWords = []string{"auth", "token", "key", "secret", "cookie", "password", "credential"}

// SecretHeader reports whether a header's value is a credential: it is
// Authorization, Proxy-Authorization or Cookie, or its name contains auth,
// token, key, secret, cookie, password or credential.
func SecretHeader(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// EndpointKey is the identity sign-ins are stored under: the hex SHA-256 of
// the URL and the non-secret headers (names lower-cased, sorted). Two
// tenants served from one URL and told apart by a header (X-Tenant) get two
// keys; a changed bearer header keeps the key.
func EndpointKey(s config.Server) string {
	type header struct{ name, value string }
	var hs []header
	for k, v := range s.Headers {
		if !SecretHeader(k) {
			hs = append(hs, header{strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)})
		}
	}
	sort.Slice(hs, func(i, j int) bool {
		if hs[i].name != hs[j].name {
			return hs[i].name < hs[j].name
		}
		return hs[i].value < hs[j].value
	})
	h := sha256.New()
	write := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	write("kin mcp oauth endpoint v1")
	write(s.URL)
	for _, x := range hs {
		write(x.name)
		write(x.value)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// shortKey is the key's prefix, for log lines.
func shortKey(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}
