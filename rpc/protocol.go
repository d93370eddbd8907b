// Package rpc is kin's wire: JSON-RPC 2.0 with LSP framing (through
// sourcegraph/jsonrpc2), the method table, every protocol message's shape
// (one protocol_<section>.go file per section of PROTOCOL.md), and the
// translation between those messages and the agent and MCP packages, which
// keep Go types of their own. PROTOCOL.md beside this file documents every
// method and notification; the golden frames in testdata/golden lock the
// shapes, and a test keeps the route table, the frames and PROTOCOL.md's
// headings in step.
//
// Nothing but protocol frames may ever be written to the connection, and no
// notification, error or trace line may carry a secret.
package rpc

// ProtocolVersion is bumped on incompatible changes.
const ProtocolVersion = "1"

// Error codes beyond JSON-RPC's own (PROTOCOL.md, Errors).
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeNotInitialized   = -32002
	CodeRequestCancelled = -32800
	CodeSessionNotFound  = -32010
	CodeBusy             = -32011
	CodeNotConfigured    = -32012
	CodeNotFound         = -32013
	CodeConfigError      = -32014
)

// Empty is the {} result.
type Empty struct{}
