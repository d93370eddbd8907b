package config

import (
	"encoding/json"
	"slices"
)

// buildServer turns one raw entry into a Server. With resolve set (and the
// entry enabled) the launch fields are expanded and checked; otherwise they
// stay empty, so no secret is resolved for a server that will not connect.
func buildServer(scope Scope, file, name string, raw json.RawMessage, resolve bool, lookup LookupEnv) (Server, error) {
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
