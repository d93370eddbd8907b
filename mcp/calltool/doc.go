// Package calltool adapts MCP tools to kin's tool.Tool interface: what an
// approval shows for an MCP call, how the call is made, and how each outcome
// maps onto a result status (spec 000, table 09-1):
//
//	content                                  completed
//	isError, or a JSON-RPC error             failed (the server's message)
//	timeout, cancellation, lost connection,
//	or an oversized reply after sending      unknown (never retried)
//	more than tool.MaxOutput                 output_limit (the first part)
//	input required, the person declined      denied (nothing more sent)
//	input required that kin cannot give      failed (nothing more sent)
//
// An input-required result (2026-07-28 protocol, multi round-trip requests)
// is a complete answer that did nothing: each question goes to the person,
// and each round of accepted answers sends the call exactly once more.
// It also provides the two read-only resource tools, list_mcp_resources and
// read_mcp_resource.
//
// Everything a server returns reaches the model inside untrusted framing
// (<untrusted-mcp-result …>), with binary content summarised, never decoded.
// This package must never send a call before its Action runs (that is, before
// the person approved it), never resend a call that may have run (only an
// input-required round is sent again, with the person's answers), and never
// let a secret into an Approval or an output.
package calltool
