package rpc

import "encoding/json"

// PROTOCOL.md, MCP server manager: mcp/list, mcp/add, mcp/update,
// mcp/remove, mcp/setEnabled, mcp/adopt, mcp/apply, mcp/reload,
// mcp/check, mcp/login.

// MCPServerRow is one server as the manager shows it. It holds no secret.
type MCPServerRow struct {
	Name      string    `json:"name"`
	Scope     string    `json:"scope"`
	Transport string    `json:"transport"`
	Enabled   bool      `json:"enabled"`
	State     string    `json:"state,omitempty"`
	Tools     int       `json:"tools"`
	LastError string    `json:"lastError,omitempty"`
	Launch    string    `json:"launch"`
	Env       []string  `json:"env,omitempty"`     // "KEY=●●●●"
	Headers   []string  `json:"headers,omitempty"` // "Name: ●●●●"
	Auth      string    `json:"auth,omitempty"`
	OAuth     *MCPOAuth `json:"oauth,omitempty"`
	Trusted   bool      `json:"trusted"`
	File      string    `json:"file,omitempty"`
	// Instructions are the server's own instructions (its initialize
	// result's), as of its last connection: the server's text, redacted.
	// InstructionsHash names them for mcp/acceptInstructions;
	// InstructionsPending says they changed since the person accepted
	// them, and are withheld from the model until accepted again.
	Instructions        string `json:"instructions,omitempty"`
	InstructionsHash    string `json:"instructionsHash,omitempty"`
	InstructionsPending bool   `json:"instructionsPending,omitempty"`
}

// MCPOAuth is an OAuth server's sign-in: public values only.
type MCPOAuth struct {
	ClientID    string `json:"clientId,omitempty"`
	RedirectURI string `json:"redirectUri,omitempty"`
	SignedIn    bool   `json:"signedIn"`
}

// MCPListResult is mcp/list's result.
type MCPListResult struct {
	Servers  []MCPServerRow `json:"servers"`
	Shadowed []MCPServerRow `json:"shadowed,omitempty"`
	Foreign  []MCPServerRow `json:"foreign"`
	Warnings []string       `json:"warnings"`
	Notices  []string       `json:"notices"`
}

// MCPAddParams is mcp/add's and mcp/update's params: the whole entry as it
// should be written.
type MCPAddParams struct {
	Scope  string          `json:"scope,omitempty"`
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config"`
}

// MCPRemoveParams is mcp/remove's params.
type MCPRemoveParams struct {
	Scope string `json:"scope,omitempty"`
	Name  string `json:"name"`
}

// MCPSetEnabledParams is mcp/setEnabled's params.
type MCPSetEnabledParams struct {
	Scope   string `json:"scope,omitempty"`
	Name    string `json:"name"`
	Enabled *bool  `json:"enabled"`
}

// MCPAdoptParams is mcp/adopt's params.
type MCPAdoptParams struct {
	Name string `json:"name"`
}

// MCPServersResult is mcp/apply's and mcp/reload's result.
type MCPServersResult struct {
	Servers []MCPServerRow `json:"servers"`
}

// MCPNameParams names a server (mcp/check, where it may be left out, and
// mcp/login).
type MCPNameParams struct {
	Name string `json:"name,omitempty"`
}

// MCPCheckResult is mcp/check's result.
type MCPCheckResult struct {
	Results []MCPCheck `json:"results"`
}

// MCPCheck says whether one server is ready, and why (not).
type MCPCheck struct {
	Name        string `json:"name"`
	Ready       bool   `json:"ready"`
	State       string `json:"state"`
	Explanation string `json:"explanation"`
}

// MCPLoginResult is mcp/login's result.
type MCPLoginResult struct {
	State string `json:"state"`
}
