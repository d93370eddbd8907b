// Package connect opens and closes the live connection to one configured MCP
// server: it spawns a stdio server or reaches a streamable-HTTP endpoint,
// runs the MCP handshake (with the discover-probe fallback) and hands back a
// go-sdk ClientSession wrapped in a Conn that knows how to stop it.
//
// The transport hardening of spec 000 section 4 lives here:
//   - stdio: the command is executed directly (never through a shell), in its
//     own process group, with only PATH, HOME and LANG from kin's environment
//     plus the configured env; its stderr is discarded; Close stops the whole
//     group (stdin closed, then SIGTERM, then SIGKILL) and reaps the leader.
//     Every inbound message is limited to MaxMessage bytes.
//   - http: https only, except to localhost or a loopback address; redirects
//     are refused (so configured headers never reach another host); every
//     POST response body is limited to MaxMessage bytes and every event of
//     the long-lived GET stream likewise. The SDK never re-sends a POST; its
//     only retries are GET reconnects with Last-Event-ID that resume a
//     response stream the server closed (SEP-1699), which re-send nothing,
//     so kin allows two of those.
//     The one other long-lived POST stream, the list-change subscription
//     (subscriptions/listen, 2026-07-28), is limited event by event too.
//   - listings bypass the SDK's response cache (definitions affect approval).
//   - list changes: on the 2026-07-28 protocol the SDK opens the
//     subscriptions/listen stream at connect for the lists whose handler is
//     set and whose listChanged the server advertises; Conn.Listen reports
//     whether the server acknowledged it (see listen.go). A server that
//     does not answer that request at all is cut off after ListenTimeout
//     instead of holding the connect up.
//   - OAuth: an http server's auth.OAuthHandler comes from
//     Options.OAuthHandler (package mcp/oauth) and sets the bearer token;
//     for an "auth": "oauth" server a configured Authorization header never
//     replaces that token. The HTTP client with the configured headers is
//     the MCP server's only: the authorization server is reached through
//     mcp/oauth's own client, so those headers never reach it. A failed
//     sign-in is reported with mcp/oauth's message (Error unwraps to the
//     *oauth.Error); the first sign-in gets Options.Timeout.
//
// This package must never connect to anything its caller did not ask for,
// never retry a tool call, and never put a secret (header or env value, URL
// credential or query value) into an error: every error it returns has been
// passed through the server's Redactor.
package connect
