package boundary

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/settings"
)

// ModelKeyVars are the environment variables that hold kin's model keys:
// OPENAI_API_KEY and every apiKeyEnv of $KIN_HOME/settings.json's models,
// now or at any earlier read in this process. The file is read again at
// every call, but kin keeps the models it loaded at start: while the
// person edits the file (an editor saving in place leaves it empty for a
// moment, a trailing comma leaves it no JSON) or takes a model out of it,
// the key kin still sends must stay withheld from commands and servers.
func ModelKeyVars(kinHome string) []string {
	if kinHome == "" {
		kinHome = DefaultKinHome()
	}
	out := []string{"OPENAI_API_KEY"}
	st, err := settings.Load(kinHome)
	if err == nil {
		for _, m := range st.Models {
			if v := strings.TrimSpace(m.APIKeyEnv); v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return keysSeen.union(filepath.Clean(kinHome), out)
}

// keysSeen is every model key variable ModelKeyVars named, per KIN_HOME,
// in this process: a name is never forgotten while kin runs.
var keysSeen = &seenKeys{byHome: map[string][]string{}}

type seenKeys struct {
	mu     sync.Mutex
	byHome map[string][]string
}

// union records names for home and returns every name recorded for it.
func (k *seenKeys) union(home string, names []string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	all := k.byHome[home]
	for _, n := range names {
		if !slices.Contains(all, n) {
			all = append(all, n)
		}
	}
	k.byHome[home] = all
	return slices.Clone(all)
}

// CommandEnv is environ ("NAME=value" pairs) without kin's model keys: the
// environment a command the model asked for runs with. Its output goes
// back to the model, and an innocent-looking `env` would hand it kin's key.
func CommandEnv(environ []string, kinHome string) []string {
	keys := ModelKeyVars(kinHome)
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(keys, name) {
			out = append(out, kv)
		}
	}
	return out
}

// WithoutModelKeys wraps a variable lookup (the one MCP configs expand
// ${VAR} with) so that kin's model keys read as unset: a server's env never
// gets them, whatever its entry says.
func WithoutModelKeys(lookup func(string) (string, bool), kinHome string) func(string) (string, bool) {
	keys := ModelKeyVars(kinHome)
	return func(name string) (string, bool) {
		if slices.Contains(keys, name) {
			return "", false
		}
		return lookup(name)
	}
}

// IsModelKey reports whether name is one of kin's model key variables.
func IsModelKey(name, kinHome string) bool { return slices.Contains(ModelKeyVars(kinHome), name) }
