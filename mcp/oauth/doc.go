// Package oauth signs kin in to remote (streamable HTTP) MCP servers that
// use OAuth 2.1: the "auth": "oauth" entries of mcp.json.
//
// The protocol work is go-sdk's: package oauthex fetches protected-resource
// and authorization-server metadata and registers clients, and
// auth.AuthorizationCodeHandler runs the authorization code grant with PKCE
// S256, the resource parameter, the state check and RFC 9207 iss validation.
// This package supplies what the SDK leaves to its host:
//
//   - the one-shot loopback callback server (127.0.0.1 on an ephemeral port,
//     or a fixed callbackPort; "localhost" binds both 127.0.0.1 and ::1);
//   - handing the sign-in URL to the person through Host.OpenURL (kin shows
//     it as an elicitation/request of mode url, purpose oauth);
//   - the client: a configured oauth.clientId, a stored dynamic
//     registration (reused, not repeated), or a new registration;
//   - persistence under KIN_HOME/mcp_auth/, one 0600 file per endpoint
//     identity (the URL plus the non-secret headers), with tokens refreshed
//     through oauth2 and every new token written back;
//   - collapsing concurrent sign-ins of one endpoint into one;
//   - errors and a Status that name the fix (the exact redirect URI, set
//     oauth.clientId, add offline_access, free the callback port).
//
// Wiring: New once per kin process; Manager.Handler(server) goes into
// mcp.StreamableClientTransport.OAuthHandler for every http server (for one
// without "auth": "oauth" the handler only explains a 401); Login, Logout and
// Status back mcp/login, sign-out and the mcp/list oauth fields.
//
// This package must never log, return in an error, or show in any String
// or Status output an access token, a refresh token, an authorization code
// or a client secret; never accept a redirect URI whose host is not
// loopback (127.0.0.1 or localhost), and refuse one before any network
// call; and never open a browser or fetch the sign-in URL itself: only the
// Host shows it to the person, who opens it.
package oauth
