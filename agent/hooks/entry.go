package hooks

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
)

// entry is one hook of a configuration file, as Claude Code writes it.
type entry struct {
	Type           string            `json:"type"`
	Command        string            `json:"command"`
	Prompt         string            `json:"prompt"`
	Model          string            `json:"model"`
	URL            string            `json:"url"`
	Headers        map[string]string `json:"headers"`
	AllowedEnvVars []string          `json:"allowedEnvVars"`
	Timeout        *float64          `json:"timeout"`
}

// hook is the entry as a hook of ev, or why kin cannot run it (a problem
// the person is told about; the entry is skipped).
func (e entry) hook(ev Event) (Hook, string) {
	h := Hook{Event: ev, Type: e.Type}
	switch e.Type {
	case "", TypeCommand:
		if strings.TrimSpace(e.Command) == "" {
			return h, "a command hook without a command"
		}
		h.Type, h.Command, h.Timeout = TypeCommand, e.Command, DefaultTimeout
	case TypePrompt, TypeAgent:
		if strings.TrimSpace(e.Prompt) == "" {
			return h, "a" + article(e.Type) + " " + e.Type + " hook without a prompt"
		}
		if ev == SessionStart {
			// nothing to judge before the session's first question; Claude
			// Code does not run them there either
			return h, e.Type + " hooks do not run at SessionStart (they run at UserPromptSubmit, PreToolUse, PostToolUse and Stop)"
		}
		h.Prompt, h.Model, h.Timeout = e.Prompt, strings.TrimSpace(e.Model), DefaultRequestTimeout
		if e.Type == TypeAgent {
			h.Timeout = DefaultAgentTimeout
		}
	case TypeHTTP:
		if p := checkURL(e.URL); p != "" {
			return h, p
		}
		for k := range e.Headers {
			if !validHeaderName(k) {
				return h, fmt.Sprintf("an http hook's header name %q is not one HTTP allows", k)
			}
		}
		h.URL, h.Headers, h.AllowedEnvVars, h.Timeout = e.URL, e.Headers, e.AllowedEnvVars, DefaultRequestTimeout
	default:
		return h, fmt.Sprintf("kin has no %q hooks (command, prompt, agent and http hooks run)", e.Type)
	}
	if e.Timeout != nil && *e.Timeout > 0 {
		h.Timeout = time.Duration(math.MaxInt64)
		// A timeout meant as "never" (1e10 seconds) does not fit a
		// Duration: converted, it overflows to a negative one, the hook
		// times out at once and blocks nothing. Past the longest wait
		// kin can keep, the longest it is.
		if s := *e.Timeout * float64(time.Second); s < float64(math.MaxInt64) {
			h.Timeout = time.Duration(s)
		}
	}
	return h, ""
}

// article is "n" before a type that starts with a vowel ("an agent
// hook"), else "".
func article(typ string) string {
	if typ != "" && strings.ContainsRune("aeiou", rune(typ[0])) {
		return "n"
	}
	return ""
}

// checkURL says why an http hook's URL cannot be used ("" when it can):
// only an absolute http or https URL with a host. The URL is shown
// masked: a token in its query is not repeated in a problem.
func checkURL(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return "an http hook without a url"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("an http hook's url %q is not a URL", boundary.MaskURL(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Sprintf("an http hook's url must be http or https, not %q", boundary.MaskURL(raw))
	}
	if u.Host == "" {
		return fmt.Sprintf("an http hook's url %q has no host", boundary.MaskURL(raw))
	}
	return ""
}

// validHeaderName reports whether name is an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
