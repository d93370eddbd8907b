package oauth

import (
	"context"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/kin-dev/kin/agent/visible"
)

// discover finds the protected-resource metadata (RFC 9728) and the
// authorization server's metadata (RFC 8414 / OpenID discovery) the way
// go-sdk's AuthorizationCodeHandler does, with the MCP spec's fallbacks:
// the challenge's resource_metadata, then the well-known URL with the
// endpoint's path inserted, then at the root; without any, the server's
// origin is the authorization server (2025-03-26); an authorization server
// without metadata gets the predefined /authorize, /token and /register.
//
// kin needs the result before go-sdk's flow runs, to pick or register the
// client (go-sdk registers anew on every sign-in and keeps nothing). The
// SDK repeats the same lookups inside its flow; they are cheap, and only a
// sign-in makes them.
func (m *Manager) discover(ctx context.Context, challenges []oauthex.Challenge, resourceURL string) (*oauthex.ProtectedResourceMetadata, *oauthex.AuthServerMeta, error) {
	var prm *oauthex.ProtectedResourceMetadata
	for _, c := range prmCandidates(bearerMetadataURL(challenges), resourceURL) {
		p, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, m.client)
		if err != nil || p == nil {
			continue
		}
		if len(p.AuthorizationServers) == 0 {
			return nil, nil, &Error{Kind: KindDiscovery, Msg: "the server's protected-resource metadata names no authorization server"}
		}
		prm = p
		break
	}
	if prm == nil {
		u, err := url.Parse(resourceURL)
		if err != nil {
			return nil, nil, &Error{Kind: KindDiscovery, Msg: "the server url cannot be parsed"}
		}
		u.Path = ""
		prm = &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{u.String()}, Resource: resourceURL}
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, m.client)
	if err != nil {
		return nil, nil, &Error{Kind: KindDiscovery, Msg: "reading the authorization server's metadata failed: " + visible.Cut(safeCause(err), 300)}
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{
			Issuer:                issuer,
			AuthorizationEndpoint: issuer + "/authorize",
			TokenEndpoint:         issuer + "/token",
			RegistrationEndpoint:  issuer + "/register",
		}
	}
	return prm, asm, nil
}

type prmCandidate struct{ url, resource string }

// prmCandidates lists where protected-resource metadata may live, each
// with the resource it must name.
func prmCandidates(fromChallenge, resourceURL string) []prmCandidate {
	var out []prmCandidate
	if fromChallenge != "" {
		out = append(out, prmCandidate{fromChallenge, resourceURL})
	}
	ru, err := url.Parse(resourceURL)
	if err != nil {
		return out
	}
	mu := *ru
	mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	out = append(out, prmCandidate{mu.String(), resourceURL})
	mu.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path = ""
	out = append(out, prmCandidate{mu.String(), root.String()})
	return out
}

func bearerMetadataURL(cs []oauthex.Challenge) string {
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" {
			return u
		}
	}
	return ""
}

// issuersEqual compares issuer identifiers, tolerating one trailing slash.
func issuersEqual(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
