// Package ledger is kin's one trust ledger: what the person trusted that
// came from someone else, kept in <KIN_HOME>/trust.json (mode 0600).
//
// Four things are "from someone else" and each needs the person's word
// before it runs or steers kin: an MCP server's launch (package mcp/trust
// keeps its records in the launches section), a repository's skills, a
// project's hooks and a repository's instruction files (Items), and an MCP
// server's skills (Items of kind mcp_skill, bound to the skill's manifest).
// Every item is keyed by its project and identity (kind, path) and holds
// the content digest the person saw: an item whose digest differs from the
// one trusted is "changed" and is asked about again before it runs (a hook,
// a skill) or named in a notice (an instruction file; see package agent).
//
// The ledger replaced mcp_trust.json (version 2 and the first release's
// version 1). A KIN_HOME that still has only mcp_trust.json is read as the
// ledger's launches, so nothing trusted there is asked again; the first
// write makes trust.json and renames the old file to
// mcp_trust.json.migrated.
//
// What this package must never do: hold or show a secret (it records
// kinds, real paths, digests, masked display lines and times); trust
// anything on its own (only Trust, called after the person said so,
// writes an item); keep state in memory (every call reads the file, so a
// grant made by another kin process is seen at once); overwrite a file it
// cannot parse (nothing is trusted while it is broken, and Check says why).
package ledger
