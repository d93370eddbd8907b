// Package manager is kin's MCP runtime: it owns the live connections to the
// configured servers and the tools they offer.
//
// A Manager loads the configuration (package config), asks before it launches
// or contacts a server that is not trusted (Host.ApproveLaunch; "trust" is
// persisted by package trust), connects the servers in parallel (package
// connect, each bounded to 10 s; 300 s for an "auth": "oauth" server that
// must sign in first), discovers and vets their tools (package
// catalog) and offers them as tool.Tools (package calltool). While running it
// refetches and re-vets a server's list when the server says it changed
// (a legacy tools/list_changed, or the same notification on the
// 2026-07-28 subscription), warns once per connection when a server
// advertises list changes but does not acknowledge that subscription,
// revokes the standing grant of a tool that was redefined, relays a server's
// questions to the person (Host.Elicit: an elicitation/create, or an
// input request of a 2026-07-28 input-required result, which calltool
// answers), reads the requested form into ask.Fields and checks the answer
// with ask.Check (the one validator), reports every state change
// (Host.Status) and reconnects live on Apply.
//
// A server that declares the MCP Skills extension has its skills listed
// when it connects (skills.go: the listing only); GetSkill and ReadSkill
// fetch an entry and a file when the model loads one, verified against the
// manifest held (size, digest, front matter). The approval is package
// agent's, bound to the manifest in the trust ledger.
//
// OAuth sign-in is package oauth's, one oauth.Manager per Manager: its
// handler goes on every http connection, its sign-in URL reaches the person
// as a Host.Elicit of mode "url" and purpose "oauth", and its notes as
// warning notices. A sign-in that did not finish leaves the server in
// needs_login; Login signs in again and reconnects, Logout signs out. List
// shows an OAuth server's public client id, redirect URI and whether a
// sign-in is stored, never a token.
//
// Wiring (rpc/mcp.go, the one adapter): package rpc implements Host (its
// launch approvals and elicitations go through the connection's ask.Broker),
// calls New once the workspace folders are known, runs Start after the
// editor's `initialized` (off the JSON-RPC read loop: Start waits for launch
// approvals), passes the Manager to the turn loop as a tool.Source, maps
// mcp/list, mcp/apply, mcp/reload, mcp/check and mcp/login onto List, Apply,
// Check and Login (and their types onto its wire types), edits the files
// through config.Store followed by Refresh, and calls Close on shutdown.
//
// The Manager must never launch or contact an untrusted server before the
// person approved it, never auto-answer an elicitation, never install a tool
// definition that did not come from a fresh, vetted listing, and never pass
// a secret to the Host: every message is redacted with the server's
// connect.Redactor, and every launch line is config's masked Display. It
// keeps no package-level state.
package manager
