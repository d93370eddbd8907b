package rpc

import "encoding/json"

// PROTOCOL.md, Lifecycle: initialize, initialized, shutdown, exit,
// $/cancelRequest.

// Notifications the editor sends.
const (
	NotifyInitialized   = "initialized"
	NotifyExit          = "exit"
	NotifyCancelRequest = "$/cancelRequest"
)

// WorkspaceFolder is LSP's.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ClientInfo names the editor.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// ClientCapabilities says what the editor renders, and what it does with
// its buffers (PROTOCOL.md "Documents").
type ClientCapabilities struct {
	Approvals     bool                             `json:"approvals,omitempty"`
	Elicitation   *ElicitationCaps                 `json:"elicitation,omitempty"`
	TextDocuments *TextDocumentsClientCapabilities `json:"textDocuments,omitempty"`
}

// InitializeParams is initialize's params.
type InitializeParams struct {
	ProcessID        *int                `json:"processId,omitempty"`
	ClientInfo       *ClientInfo         `json:"clientInfo,omitempty"`
	Capabilities     *ClientCapabilities `json:"capabilities,omitempty"`
	WorkspaceFolders []WorkspaceFolder   `json:"workspaceFolders,omitempty"`
	RootURI          string              `json:"rootUri,omitempty"`
	RootPath         string              `json:"rootPath,omitempty"`
}

// ServerInfo names kin.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ModelInfo tells the editor whether turns can run. Never the key.
type ModelInfo struct {
	Configured bool   `json:"configured"`
	Model      string `json:"model"`
	BaseURL    string `json:"baseUrl,omitempty"`
	Missing    string `json:"missing,omitempty"`
}

// ElicitationCaps says which elicitation modes are rendered.
type ElicitationCaps struct {
	Form bool `json:"form"`
	URL  bool `json:"url"`
}

// ServerCapabilities lists what this kin offers.
type ServerCapabilities struct {
	Sessions    bool            `json:"sessions"`
	MCP         bool            `json:"mcp"`
	Approvals   bool            `json:"approvals"`
	Elicitation ElicitationCaps `json:"elicitation"`
	// TextDocuments says what kin does with the editor's buffers on this
	// connection (PROTOCOL.md "Documents").
	TextDocuments TextDocumentsServerCapabilities `json:"textDocuments"`
}

// SandboxInfo says how commands run: confined by which mechanism, or not
// and why.
type SandboxInfo struct {
	Mode      string `json:"mode"`                // auto, required, off
	Mechanism string `json:"mechanism,omitempty"` // bubblewrap, seatbelt
	Confined  bool   `json:"confined"`
	Reason    string `json:"reason,omitempty"` // why not confined
	Hint      string `json:"hint,omitempty"`   // what would confine them
	// Probing is set when kin has not tried the sandbox yet (initialize
	// never waits for it): mechanism and confined are what kin expects,
	// and a notice follows after initialized if the try says otherwise.
	Probing bool `json:"probing,omitempty"`
}

// InitializeResult is initialize's result.
type InitializeResult struct {
	ProtocolVersion  string             `json:"protocolVersion"`
	ServerInfo       ServerInfo         `json:"serverInfo"`
	Capabilities     ServerCapabilities `json:"capabilities"`
	Model            ModelInfo          `json:"model"`
	WorkspaceFolders []string           `json:"workspaceFolders"`
	Sandbox          SandboxInfo        `json:"sandbox"`
}

// CancelParams is $/cancelRequest's params: the id of the request to
// cancel, a number or a string.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}
