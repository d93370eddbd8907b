package config

import (
	"encoding/json"
	"fmt"
)

// Scope says which file a server entry came from.
type Scope string

// Scopes.
const (
	ScopeProject Scope = "project" // <workdir>/.kin/mcp.json
	ScopeGlobal  Scope = "global"  // <KIN_HOME>/mcp.json
	ScopeForeign Scope = "foreign" // <workdir>/.mcp.json: listed, never loaded
	// ScopeClient is a server an ACP client passed for one session
	// (FromClient): it runs under kin's rules as any other.
	ScopeClient Scope = "client"
)

// Transport is the live transport of a loadable server.
type Transport string

// Transports. "streamable-http" in a file loads as TransportHTTP.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
)

// Server is one validated mcpServers entry.
//
// The launch fields (Command, Args, URL, Headers, Env, OAuth.ClientID) hold
// expanded values and may therefore contain secrets: never log or show them;
// use Display. They are filled only for servers that may connect (loaded,
// enabled, not shadowed). Disabled, shadowed and foreign servers are
// validated but left unexpanded: their launch fields are empty and only Raw
// and Display describe them.
type Server struct {
	Name      string
	Scope     Scope
	Transport Transport

	Command string            // stdio only
	Args    []string          // stdio only
	Env     map[string]string // stdio only; extra variables over the safe baseline
	URL     string            // http only
	Headers map[string]string // http only

	TimeoutMS int  // per tool call; 0 means the caller's default
	Disabled  bool // the entry is kept but must not connect

	// AllowedTools is the tool allowlist. AllowedToolsSet reports that the
	// field was present: set with an empty list exposes no tool at all.
	AllowedTools    []string
	AllowedToolsSet bool

	// Sandbox is a stdio server's "sandbox" field; nil is the default
	// confinement. Part of the launch identity (trust.Hash).
	Sandbox *Sandbox

	Auth  string // "oauth" or ""; an oauth block on an http server implies "oauth"
	OAuth *OAuth // nil unless the entry has an oauth block

	Raw  json.RawMessage // the entry exactly as written, unexpanded
	File string          // the file the entry came from
}

// OAuth holds the optional parameters of the OAuth 2.1 sign-in flow.
type OAuth struct {
	ClientID     string   // expanded; a public client id, empty for dynamic registration
	CallbackHost string   // "127.0.0.1" (default) or "localhost"
	CallbackPort int      // 0 means an ephemeral port
	Scopes       []string // nil: use the scopes the server advertises
}

// Connectable reports whether the server may be connected: it is loaded
// from a kin scope (or passed by an ACP client) and not disabled.
func (s Server) Connectable() bool {
	return !s.Disabled && (s.Scope == ScopeProject || s.Scope == ScopeGlobal || s.Scope == ScopeClient)
}

// Warning reports a problem with a file (Server empty) or with one entry,
// which was skipped. Problem never contains a resolved value.
type Warning struct {
	File    string
	Server  string
	Problem string
}

func (w Warning) String() string {
	if w.Server == "" {
		return fmt.Sprintf("%s: %s", w.File, w.Problem)
	}
	return fmt.Sprintf("%s: server %q skipped: %s", w.File, w.Server, w.Problem)
}

// Config is the merged result of Load.
type Config struct {
	// Servers are the loaded servers, project entries first, each in file
	// order. Disabled servers are included (Disabled set); see Connectable.
	Servers []Server
	// Shadowed are global servers hidden by a project entry of the same name.
	Shadowed []Server
	// Foreign are the valid entries of a root .mcp.json (never loaded).
	Foreign []Server
	// Warnings lists skipped entries and unloadable files.
	Warnings []Warning
	// Notices are launch notes for a person (such as a found .mcp.json).
	Notices []string
}

// Server returns the loaded server with the given name.
func (c *Config) Server(name string) (Server, bool) {
	for _, s := range c.Servers {
		if s.Name == name {
			return s, true
		}
	}
	return Server{}, false
}

// Connectable returns the servers that may be connected (enabled ones).
func (c *Config) Connectable() []Server {
	var out []Server
	for _, s := range c.Servers {
		if s.Connectable() {
			out = append(out, s)
		}
	}
	return out
}
