// Package config is kin's MCP server configuration model: it loads, merges,
// expands and validates the mcpServers entries of the two mcp.json scopes,
// and it edits those files safely for the server manager and `kin mcp`.
//
// Files, in precedence order (a project entry shadows a global one of the
// same name):
//
//	<workdir>/.kin/mcp.json   project scope
//	<KIN_HOME>/mcp.json       global scope
//
// A root <workdir>/.mcp.json belongs to other harnesses. It is NEVER loaded:
// Load only reports it (Config.Notices) and lists its entries as foreign rows
// (Config.Foreign) that a person may copy into the project scope with
// Store.Adopt. Foreign entries are never expanded, and the foreign file is
// never written.
//
// Secrets: values may reference the environment as ${VAR} or
// ${VAR:-default}; only enabled, unshadowed, loaded entries are expanded.
// The project file is one people commit, so Store never writes a secret
// value into it: an env or header value, URL password or query value given
// as literal text for a project entry is stored in
// <KIN_HOME>/mcp_secrets.json (0600), for that project folder and server
// only, and the file gets a ${VAR} reference, which Load resolves for that
// server before the environment. The
// package must never log or display a resolved value: warnings name fields
// and variables, never values, and Server.Display masks headers, env values,
// URL credentials and query values, and shows ${VAR} references in place of
// what they resolved to.
//
// Malformed entries are skipped with a Warning and never fail the load; a file
// that is not valid JSON is not loaded and is never overwritten. Writes keep
// every other entry's raw JSON (unknown fields and ${VAR} spellings included),
// are atomic, use mode 0600 and hold a flock across read-modify-write (see
// package lockedfile).
package config
