package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// buildServer turns one raw entry into a Server. With resolve set (and the
// entry enabled) the launch fields are expanded and checked; otherwise they
// stay empty, so no secret is resolved for a server that will not connect.
//
// withheld are variables no server gets (kin's model keys): a reference to
// one is a problem that says so.
func buildServer(scope Scope, file, name string, raw json.RawMessage, resolve bool, lookup LookupEnv, withheld []string) (Server, error) {
	e, err := decodeEntry(raw)
	if err != nil {
		return Server{}, err
	}
	t, err := checkEntry(name, e)
	if err != nil {
		return Server{}, err
	}
	s := Server{
		Name:            name,
		Scope:           scope,
		Transport:       t,
		TimeoutMS:       e.timeout,
		Disabled:        e.disabled,
		AllowedTools:    slices.Clone(e.allowed),
		AllowedToolsSet: e.allowedSet,
		Raw:             slices.Clone(raw),
		File:            file,
	}
	if e.sandbox != nil && t != TransportStdio {
		return Server{}, errors.New(`"sandbox" applies to stdio servers only (kin does not start an http server)`)
	}
	s.Sandbox = e.sandbox
	if t == TransportHTTP {
		s.Auth = e.auth
		if e.oauth != nil {
			s.Auth = "oauth"
			s.OAuth = &OAuth{
				CallbackHost: e.oauth.host,
				CallbackPort: e.oauth.port,
				Scopes:       slices.Clone(e.oauth.scopes),
			}
			if s.OAuth.CallbackHost == "" {
				s.OAuth.CallbackHost = "127.0.0.1"
			}
		}
	}
	if !resolve || s.Disabled {
		return s, nil
	}
	x := newExpander(lookup)
	x.withheld = withheld
	if scope == ScopeProject {
		x.unset = "; nor is a value stored for this project's server in " + SecretsFileName + " (set the variable, or add the server again with its value)"
	}
	switch t {
	case TransportStdio:
		s.Command = x.expand("command", e.command)
		s.Args = x.list("args", e.args)
		s.Env = x.dict("env", e.env)
	case TransportHTTP:
		s.URL = x.expand("url", e.url)
		s.Headers = x.dict("headers", e.headers)
		if s.OAuth != nil {
			s.OAuth.ClientID = x.expand("oauth.clientId", e.oauth.clientID)
		}
	}
	if err := x.err(); err != nil {
		return Server{}, err
	}
	if err := checkResolved(&s); err != nil {
		return Server{}, err
	}
	return s, nil
}

// FromClient builds a server an ACP client passed for one session
// (session/new's mcpServers): its values are the client's, literal (no
// ${VAR} expansion), checked as a file's entry is (the name rules, the
// transport's fields, https only but to loopback), and its scope is
// ScopeClient. Like every Server its launch fields may hold secrets.
func FromClient(name string, t Transport, command string, args []string, env map[string]string, url string, headers map[string]string) (Server, error) {
	if err := CheckName(name); err != nil {
		return Server{}, err
	}
	e := map[string]any{}
	switch t {
	case TransportStdio:
		e["command"], e["args"], e["env"] = command, args, env
	case TransportHTTP:
		e["type"], e["url"], e["headers"] = "http", url, headers
	default:
		return Server{}, fmt.Errorf("transport %q is not supported (stdio or http)", t)
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return Server{}, err
	}
	s, err := buildServer(ScopeClient, "", name, raw, false, nil, nil)
	if err != nil {
		return Server{}, err
	}
	s.Raw = nil // literal values: Display shows them masked, never as references
	switch t {
	case TransportStdio:
		s.Command, s.Args, s.Env = command, slices.Clone(args), maps.Clone(env)
	case TransportHTTP:
		s.URL, s.Headers = url, maps.Clone(headers)
	}
	if err := checkResolved(&s); err != nil {
		return Server{}, err
	}
	return s, nil
}
