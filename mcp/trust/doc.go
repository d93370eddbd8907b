// Package trust is kin's persistent record of MCP servers a person chose to
// trust ("Trust server"), kept in <KIN_HOME>/mcp_trust.json (mode 0600).
//
// A grant is keyed by the server name and a SHA-256 hash of the
// launch-affecting fields (transport, command, args, url, env — the expanded
// values, as canonical JSON). Any change to those fields breaks the match and
// the server must be approved again: the rug-pull defence. Timeout, disabled,
// allowed_tools, headers and auth do not affect the hash.
//
// The store must never hold or display a secret: it records only the hash,
// the transport, the masked display line (config.Server.Display) and the
// time — never env values, headers or unmasked URLs. Session-scoped
// "allow once" decisions are not stored here; the caller keeps them in
// memory (keyed by Hash, so a changed server asks again).
package trust
