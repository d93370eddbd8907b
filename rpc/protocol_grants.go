package rpc

import "time"

// PROTOCOL.md, Grants: grants/list, grants/revoke.

// Grant is one standing "always allow" or server trust.
type Grant struct {
	ID   string `json:"id"`
	Type string `json:"type"` // bash, tool, mcp, trust
	Key  string `json:"key"`
	// Fingerprint, on an MCP grant, is the tool definition it was given for
	// (opaque to editors).
	Fingerprint string    `json:"fingerprint,omitempty"`
	Label       string    `json:"label"`
	Scope       string    `json:"scope"` // session or permanent
	SessionID   string    `json:"sessionId,omitempty"`
	Created     time.Time `json:"created"`
}

// GrantsListResult is grants/list's result.
type GrantsListResult struct {
	Grants []Grant `json:"grants"`
}

// GrantIDParams is grants/revoke's params.
type GrantIDParams struct {
	ID string `json:"id"`
}
