package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/kin-dev/kin/agent/boundary"
)

// Mask stands in for a secret in display output.
const Mask = boundary.Mask

// Display is the secret-free description of a server for the manager,
// approvals, notifications and logs. It is built from the entry as written
// (Server.Raw), never from expanded values, so a resolved secret cannot
// appear in it: ${VAR} references show as ${VAR} (defaults dropped), header
// and env values are masked, and URLs lose credentials, query values and
// fragments. Control and bidi characters are escaped so a line cannot spoof
// another. (A Server built by hand without Raw is described from its fields
// with the same masking, but its args are then shown as they are.)
type Display struct {
	Name      string
	Scope     Scope
	Transport Transport
	// Launch is one line: the stdio command line, or the masked http URL.
	Launch string
	// Env lists "KEY=●●●●", sorted by key.
	Env []string
	// Headers lists "Name: ●●●●" ("Authorization: Bearer ●●●●" keeps the
	// scheme word), sorted by name.
	Headers []string
	// Auth is "oauth" or "". OAuth describes the sign-in parameters: the
	// public client id, callback host and port, and scopes.
	Auth  string
	OAuth string

	// Sandbox is the "sandbox" setting in words ("" for the default).
	Sandbox string

	Disabled        bool
	TimeoutMS       int
	AllowedTools    []string
	AllowedToolsSet bool
}

// Line is a one-line summary: `name (scope, transport): launch`.
func (d Display) Line() string {
	line := fmt.Sprintf("%s (%s, %s): %s", d.Name, d.Scope, d.Transport, d.Launch)
	if d.Disabled {
		line += " [disabled]"
	}
	return line
}

// Display describes the server without any secret.
func (s Server) Display() Display {
	d := Display{
		Name:            quoteIfNeeded(s.Name),
		Scope:           s.Scope,
		Transport:       s.Transport,
		Auth:            s.Auth,
		Disabled:        s.Disabled,
		TimeoutMS:       s.TimeoutMS,
		AllowedToolsSet: s.AllowedToolsSet,
		Sandbox:         s.Sandbox.Describe(),
	}
	// the allowlist is the repository's text as much as the command line
	// is: an escape sequence or a line break in a tool's name otherwise
	// reached kin mcp get's terminal as written
	if s.AllowedTools != nil {
		d.AllowedTools = make([]string, len(s.AllowedTools))
		for i, t := range s.AllowedTools {
			d.AllowedTools[i] = quoteIfNeeded(t)
		}
	}
	e, err := decodeEntry(s.Raw)
	// Without the entry as written, the values are literals: all masked.
	asFiled := len(s.Raw) > 0 && err == nil
	if !asFiled {
		e = &entry{command: s.Command, args: s.Args, url: s.URL, headers: s.Headers, env: s.Env}
	}
	repo := asFiled && (s.Scope == ScopeProject || s.Scope == ScopeForeign)
	// show renders a value that may be secret (env, header, URL query or
	// user part): masked, but for an entry a repository wrote, whose ${VAR}
	// names show (showValue), since they say which of the person's
	// variables its server is sent; a literal is masked all the same.
	show := masked
	if repo {
		show = showValue
	}
	// showEnv renders an env value. A project's .kin/mcp.json holds no
	// secret in clear (kin moves a typed value to mcp_secrets.json and
	// writes a reference; a value written there by hand is, as the README
	// says, one meant to be committed), and its env decides what the
	// server runs (NODE_OPTIONS=--require ./hook.js, LD_PRELOAD, PATH):
	// the person approving it sees the value as written, references by
	// name. Everyone else's literals stay masked (a root .mcp.json often
	// holds a token in clear).
	showEnv := show
	if asFiled && s.Scope == ScopeProject {
		showEnv = asWritten
	}
	// refs renders what decides what runs and where (the command line,
	// the URL before its credentials): a repository's ${VAR:-default}
	// runs its default whenever the person has no such variable, so the
	// default, the repository's own text, shows as written ("node
	// ${SRV:-./evil.js}"); dropped, the approval showed "node ${SRV}"
	// for a launch the repository chose. The person's own entries keep
	// dropping defaults (one may be a secret they typed).
	refs := showRefs
	if repo {
		refs = asWritten
	}
	switch s.Transport {
	case TransportStdio:
		parts := []string{quoteIfNeeded(refs(e.command))}
		for _, a := range e.args {
			parts = append(parts, quoteIfNeeded(refs(a)))
		}
		d.Launch = strings.Join(parts, " ")
		for _, k := range sortedKeys(e.env) {
			d.Env = append(d.Env, quoteIfNeeded(k)+"="+quoteIfNeeded(showEnv(e.env[k])))
		}
	case TransportHTTP:
		d.Launch = maskURLRefs(e.url, refs, show)
		for _, k := range sortedKeys(e.headers) {
			d.Headers = append(d.Headers, quoteIfNeeded(k)+": "+maskHeader(k, e.headers[k], show))
		}
	}
	if o := s.OAuth; o != nil {
		client := o.ClientID // a public identifier, shown as the spec asks
		if client == "" && e.oauth != nil {
			client = showRefs(e.oauth.clientID)
		}
		if client == "" {
			client = "(dynamic registration)"
		}
		port := "ephemeral port"
		if o.CallbackPort != 0 {
			port = "port " + strconv.Itoa(o.CallbackPort)
		}
		d.OAuth = fmt.Sprintf("client %s, callback %s %s", quoteIfNeeded(client), o.CallbackHost, port)
		if o.Scopes != nil {
			scopes := make([]string, len(o.Scopes))
			for i, sc := range o.Scopes {
				scopes[i] = quoteIfNeeded(sc)
			}
			d.OAuth += ", scopes " + strings.Join(scopes, " ")
		}
	}
	return d
}

// MaskURL renders a URL for display: ${VAR} references shown by name,
// credentials masked as everywhere kin reports a URL (boundary.MaskURL:
// userinfo removed, every query value masked, a fragment's key=value
// values masked; an #anchor stays).
func MaskURL(raw string) string { return maskURLRefs(raw, showRefs, masked) }

// maskURLRefs is MaskURL with refs rendering the references first (show
// then renders each credential part: the userinfo, a query value, a
// fragment's value, wherever a default put it).
func maskURLRefs(raw string, refs, show func(string) string) string {
	s := refs(raw)
	if s == Mask {
		return Mask
	}
	return quoteIfNeeded(boundary.MaskURLWith(s, show))
}

// asWritten renders a repository's value as it is written, defaults
// included (unparseable text masked, as showRefs does).
func asWritten(s string) string {
	if _, err := parseRefs(s); err != nil {
		return Mask
	}
	return s
}

// showValue renders a value that may hold a secret: its ${VAR} references
// by name, its literal text masked ("${TOKEN}", "●●●●${TOKEN}", "●●●●").
// The names must show: masking "${GITHUB_TOKEN}" as ●●●● let a project's
// entry send the person's token to its server (in env, a header or the
// URL) while the launch approval showed only a masked value; a name is no
// secret (it is in the file for anyone to read), a literal may be one.
func showValue(v string) string {
	segs, err := parseRefs(v)
	if err != nil {
		return Mask
	}
	var b strings.Builder
	masked := false
	for _, seg := range segs {
		if seg.name != "" {
			b.WriteString("${" + seg.name + "}")
			masked = false
		} else if !masked {
			b.WriteString(Mask)
			masked = true
		}
	}
	if b.Len() == 0 {
		return Mask // an empty value shows as any literal does
	}
	return b.String()
}

var authScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9._~+/-]*)\s+\S`) })

// MaskHeader renders a header value for display. Every value is masked; an
// Authorization or Proxy-Authorization value keeps its scheme word
// ("Bearer ●●●●").
func MaskHeader(name, value string) string {
	return maskHeader(name, value, masked)
}

// masked renders any value as Mask.
func masked(string) string { return Mask }

// maskHeader is MaskHeader with show rendering the value after the scheme
// word ("Bearer ${API_TOKEN}" for a project's entry).
func maskHeader(name, value string, show func(string) string) string {
	if strings.EqualFold(name, "Authorization") || strings.EqualFold(name, "Proxy-Authorization") {
		if m := authScheme().FindStringSubmatch(value); m != nil {
			rest := strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(value, " \t"), m[1]), " \t")
			return m[1] + " " + show(rest)
		}
	}
	return show(value)
}

// quoteIfNeeded returns s, or s quoted with escapes when it is empty or has
// spaces, quotes, backslashes, or control, format or other non-graphic
// characters (which could break or spoof a display line).
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == '"' || r == '\'' || r == '\\' {
			return strconv.Quote(s)
		}
	}
	return s
}
