package rpc

// PROTOCOL.md, Notifications about the service: mcp/status, notice,
// log/message.

// Notifications about the service.
const (
	NotifyMCPStatus  = "mcp/status"
	NotifyNotice     = "notice"
	NotifyLogMessage = "log/message"
)

// MCPStatus is mcp/status's params.
type MCPStatus struct {
	Server string `json:"server"`
	State  string `json:"state"`
	Tools  int    `json:"tools"`
	Error  string `json:"error,omitempty"`
}

// Notice is notice's params: something a person should see.
type Notice struct {
	Level     string `json:"level"` // info, warning, error
	Message   string `json:"message"`
	Source    string `json:"source,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Nesting
}

// LogMessage is log/message's params: one of kin's own log lines of
// level warn or above, secrets masked.
type LogMessage struct {
	Level   string `json:"level"` // warning, error
	Message string `json:"message"`
}
