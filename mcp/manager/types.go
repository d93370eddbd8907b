package manager

import (
	"context"
	"github.com/kin-dev/kin/agent/sandbox"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/config"
)

// State is a server's connection state (the mcp/status states).
type State string

// States.
const (
	StateDisabled      State = "disabled"
	StateAwaitingTrust State = "awaiting_trust"
	StateDenied        State = "denied"
	StateConnecting    State = "connecting"
	StateConnected     State = "connected"
	StateNeedsLogin    State = "needs_login"
	StateUnavailable   State = "unavailable"
	StateStopped       State = "stopped"
)

// Launch decisions (the approval/respond decisions of a server_launch).
const (
	DecisionAllowOnce = "allow_once"
	DecisionTrust     = "trust"
	DecisionDeny      = "deny"
)

// Notice levels.
const (
	LevelInfo    = "info"
	LevelWarning = "warning"
	LevelError   = "error"
)

// Host is what the Manager needs from its embedder (the rpc layer). Every
// method may be called from any goroutine, several at once; none is called
// with a Manager lock held, so a Host may call back into the Manager.
type Host interface {
	// ApproveLaunch asks the person whether to start (stdio) or contact
	// (http) a server that is not trusted. It returns DecisionAllowOnce,
	// DecisionTrust or DecisionDeny; an error or anything else is a deny.
	// It must return when ctx is done.
	ApproveLaunch(ctx context.Context, req LaunchRequest) (string, error)
	// Elicit asks the person what a server wants to know. An error is a
	// decline. It must return when ctx is done.
	Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error)
	// Status reports a server's state change (mcp/status).
	Status(s Status)
	// Notice is something a person should see (level info, warning, error).
	Notice(level, message string)
	// RevokeGrant removes the standing "always allow" grants with key (see
	// calltool.GrantKey) from every session, except those given for the
	// tool definition keep ("" removes them all). It reports whether one
	// was removed.
	RevokeGrant(key, keep string) bool
}

// ElicitCompleter is a Host that is told when a server says that a URL-mode
// elicitation it asked finished out of band (MCP's
// notifications/elicitation/complete, naming the server's elicitationId).
// A Host that is not one is told nothing.
type ElicitCompleter interface {
	ElicitComplete(server, elicitationID string)
}

// LaunchRequest is a server_launch approval. It holds no secret: the
// destination is the masked launch line, env and header values are masked.
type LaunchRequest struct {
	Server      string
	Transport   string   // "stdio" or "http"
	Destination string   // the command line (${VAR} shown by name) or the masked URL
	Scope       string   // "project" or "global"
	Env         []string // "KEY=●●●●"
	Headers     []string // "Name: ●●●●"
	// Changed is set when the server was trusted before with a different
	// launch (its command, args, url or env, the program it runs, where it
	// starts, a project file it runs), or by an earlier kin whose grant
	// did not name the project; ChangedWhy says which.
	Changed    bool
	ChangedWhy string
	// Workdir is where a stdio server starts.
	Workdir string
	// Program is the file a stdio server runs when its command is a bare
	// name (npx) that its PATH finds inside the workspace folder (a
	// project entry's "env": {"PATH": ".kin/bin:/usr/bin"}): the command
	// line alone reads as a program of the system. "" otherwise.
	Program string
	// Sandbox says how a stdio server is confined (package mcp/confine):
	// sandboxed and what it may write, or unconfined and why; "" when
	// kin confines nothing (an http server, a manager without a sandbox).
	Sandbox string
	// ReadOnlyTools are the tools trusting the server lets run without
	// asking (those it declared read-only when kin last saw it); nil when
	// kin has not seen its tools yet (they are then listed in a notice
	// when it connects). Allowing it once lets none run unasked.
	ReadOnlyTools []string
}

// Status is one server's state (mcp/status).
type Status struct {
	Server string
	State  State
	Tools  int
	Error  string // redacted; set for unavailable, needs_login, denied
}

// Options configures a Manager.
type Options struct {
	Workdir string // the project folder (<workdir>/.kin/mcp.json)
	KinHome string // KIN_HOME (mcp.json, mcp_trust.json)
	Host    Host
	Logger  *zap.Logger                 // nil: no logging
	Env     func(string) (string, bool) // nil: os.LookupEnv
	// Reserved names no MCP tool may take (the built-in tools).
	Reserved []string
	// Limits override catalog.DefaultLimits (tests).
	Limits *catalog.Limits
	// HTTPTransport is the base round tripper for http servers (tests).
	HTTPTransport http.RoundTripper
	// Version is kin's version, sent to servers as clientInfo.
	Version string
	// Fixed, when set, are the only servers: given by a front end (the
	// MCP servers an ACP client passed for one session) instead of read
	// from the configuration files. They are asked for, trusted and vetted
	// as configured servers are.
	Fixed []config.Server
	// Sandbox is the command sandbox stdio servers run in (package
	// mcp/confine); nil runs them unconfined, unsaid (tests).
	Sandbox *sandbox.Sandbox
	// ListenTimeout bounds the wait for a server's acknowledgement of the
	// list-change subscription (tests); 0 means connect.ListenTimeout.
	ListenTimeout time.Duration
	// ConnectTimeout bounds a server's connect and tool discovery (tests
	// that start real npm servers on a loaded machine); 0 means
	// connect.ConnectTimeout.
	ConnectTimeout time.Duration
}
