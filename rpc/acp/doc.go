// Package acp is kin's second wire: the Agent Client Protocol (schema v1,
// newline-delimited JSON-RPC 2.0 over stdio), which Zed, JetBrains IDEs,
// Emacs agent-shell, CodeCompanion, avante.nvim and other editors speak to
// drive coding agents. `kin acp` serves it over the same agent service as
// `kin serve`: every ACP method maps one to one onto what kin's own protocol
// does (sessions, turns, approvals, elicitations, MCP servers), never onto a
// second agent.
//
// Shapes follow the schema JSON that @agentclientprotocol/sdk ships, not the
// prose documentation where the two differ; golden frames in
// testdata/golden are validated against it.
//
// What this package must never do: write anything but protocol frames to
// the connection; let a client capability (fs/*, elicitation) become a way
// around kin's gate (paths are confined and approved before the client is
// called); put a secret into a frame, a trace or a log line; or run a client
// supplied MCP server before the person allowed it.
package acp
