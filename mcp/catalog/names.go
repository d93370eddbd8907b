package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// MaxName is the longest exposed tool name.
const MaxName = 64

// Prefix starts every exposed MCP tool name.
const Prefix = "mcp__"

type nameKey struct{ server, tool string }

// Names hands out exposed names and remembers them, so a tool keeps its
// name for as long as it is registered and two tools never share one. The
// zero value is not usable; use NewNames. Safe for concurrent use.
type Names struct {
	mu     sync.Mutex
	byKey  map[nameKey]string
	owners map[string]nameKey
}

// NewNames returns an empty name table.
func NewNames() *Names {
	return &Names{byKey: map[nameKey]string{}, owners: map[string]nameKey{}}
}

// Reserve marks a name as taken by something other than an MCP tool (a
// built-in such as read_file), so no MCP tool gets it.
func (n *Names) Reserve(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.owners[name] = nameKey{}
}

// Assign returns the exposed name of server's tool, allocating one if the
// tool has none: mcp__<server>__<tool> when that is valid, at most 64
// characters, unambiguous and free; otherwise a hashed form (see Hashed).
//
// Ambiguous means that another server and tool could spell the same name:
// server "a" with tool "b__c" and server "a__b" with tool "c" both make
// mcp__a__b__c. Such a name is never handed out plainly, to either of them,
// so that a tool's name does not depend on which server listed first
// (after a restart, a disable or an enable).
func (n *Names) Assign(server, tool string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := nameKey{server, tool}
	if name, ok := n.byKey[k]; ok {
		return name
	}
	name := Prefix + server + "__" + tool
	if _, taken := n.owners[name]; taken || !validName(name) || ambiguous(server, tool) {
		name = Hashed(server, tool)
		for i := 1; ; i++ { // a hash collision: practically never
			if _, taken := n.owners[name]; !taken {
				break
			}
			name = Hashed(server, tool+strings.Repeat("\x00", i))
		}
	}
	n.byKey[k] = name
	n.owners[name] = k
	return name
}

// Release forgets the names of a server's tools not in keep (nil: all).
func (n *Names) Release(server string, keep map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, name := range n.byKey {
		if k.server == server && !keep[k.tool] {
			delete(n.byKey, k)
			delete(n.owners, name)
		}
	}
}

// Hashed is the fallback name: the plain name with disallowed characters
// replaced by '_', cut so that '_' and 8 hex digits of a hash of server and
// tool fit within MaxName.
func Hashed(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	base := []byte(Prefix + server + "__" + tool)
	for i, c := range base {
		if !allowed(c) {
			base[i] = '_'
		}
	}
	if len(base) > MaxName-len(suffix) {
		base = base[:MaxName-len(suffix)]
	}
	return string(base) + suffix
}

// ambiguous reports whether <server>__<tool> has more than one place where
// "__" could separate a server name from a tool name (a "__" inside either
// name, a server name ending in '_' or a tool name starting with one).
func ambiguous(server, tool string) bool {
	joined := server + "__" + tool
	n := 0
	for i := 0; i+1 < len(joined); i++ {
		if joined[i] == '_' && joined[i+1] == '_' {
			n++
		}
	}
	return n > 1
}

func allowed(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func validName(s string) bool {
	if s == "" || len(s) > MaxName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !allowed(s[i]) {
			return false
		}
	}
	return true
}
