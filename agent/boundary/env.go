package boundary

import (
	"slices"
	"strings"

	"github.com/kin-dev/kin/agent/settings"
)

// ModelKeyVars are the environment variables that hold kin's model keys:
// OPENAI_API_KEY and every apiKeyEnv of $KIN_HOME/settings.json's models
// (a settings file that cannot be read names only OPENAI_API_KEY).
func ModelKeyVars(kinHome string) []string {
	if kinHome == "" {
		kinHome = DefaultKinHome()
	}
	out := []string{"OPENAI_API_KEY"}
	st, err := settings.Load(kinHome)
	if err != nil {
		return out
	}
	for _, m := range st.Models {
		if v := strings.TrimSpace(m.APIKeyEnv); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
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
