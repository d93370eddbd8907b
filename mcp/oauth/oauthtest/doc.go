// Package oauthtest provides an in-process OAuth 2.1 authorization server and
// an MCP server protected by it, for testing kin's OAuth sign-in (package
// mcp/oauth) end to end without a network or a browser.
//
// AuthServer serves authorization-server metadata (RFC 8414), dynamic client
// registration (RFC 7591), an authorize endpoint that approves at once by
// redirecting to the redirect URI with code, state and iss (RFC 9207), a
// token endpoint that checks PKCE S256, the resource parameter (RFC 8707)
// and client authentication and issues refresh tokens that rotate, and
// revocation (RFC 7009). Each behaviour a test needs to break (no
// registration, a wrong iss, no refresh token, short-lived tokens) is an
// AuthOptions field. ResourceServer is a go-sdk streamable-HTTP MCP server
// behind bearer-token middleware that answers 401 with a WWW-Authenticate
// resource_metadata challenge (RFC 9728). Browser plays the person: it
// fetches a sign-in URL and follows the redirect to kin's loopback callback.
//
// It is test support only: nothing outside _test files and the conformance
// client may import it, and it must never contact anything but loopback
// addresses.
package oauthtest
