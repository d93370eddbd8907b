// Package tool defines what every tool kin offers the model looks like: its
// spec, how a call is prepared (so the person can be shown exactly what will
// happen before it happens) and how a prepared call runs and reports its
// outcome. Built-in tools and MCP tools implement the same interface, so the
// turn loop and the permission gate treat them alike.
//
// This package must stay a leaf: it knows nothing of JSON-RPC, sessions or
// the model client.
package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/files"
)

// Kind says what a tool does, in the Agent Client Protocol's words. Editors
// pick icons and wording from it.
type Kind string

const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindExecute Kind = "execute"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// Status is the one outcome every call result has.
type Status string

const (
	StatusCompleted   Status = "completed"
	StatusFailed      Status = "failed"
	StatusDenied      Status = "denied"
	StatusUnknown     Status = "unknown"      // may have happened, not confirmed: never retried
	StatusOutputLimit Status = "output_limit" // completed, output cut to the limit
)

// MaxOutput is the most a result may carry back to the model.
const MaxOutput = 64 << 10

// Spec is what the model is told about a tool.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // a JSON Schema object
	Strict      bool            `json:"strict"`     // built-ins may be strict; MCP tools never are
	Kind        Kind            `json:"kind"`
}

// Env is what a call may know about where it runs.
type Env struct {
	SessionID string
	TurnID    string
	CallID    string
	// Roots are the workspace folders the editor opened (absolute, cleaned).
	Roots []string
	// Files is how the session reads and writes files: the editor's
	// buffers first where the front end has them. Tools call it only for
	// paths that passed their path rules. Nil means files.Disk.
	Files files.Access
	// Workspace is the session's trust boundary around Roots (its roots
	// opened once, the secrets around them): every path a tool touches is
	// resolved and judged by it. Nil means one made from Roots and
	// KinHome.
	Workspace *boundary.Workspace
	// KinHome is $KIN_HOME ("" for the default).
	KinHome string
}

// Tool is one callable thing offered to the model.
type Tool interface {
	Spec() Spec
	// Prepare validates the arguments and works out what the call would do.
	// An error here is a failed result the model can act on (bad arguments,
	// a missing file, a non-unique edit string); nothing has happened yet.
	Prepare(ctx context.Context, env Env, args json.RawMessage) (*Action, error)
}

// Action is a prepared call: what the person must approve, if anything, and
// how to run it. Run must do exactly what Approval showed.
type Action struct {
	// Approval is nil for calls that need no decision (confined reads).
	Approval *Approval
	// Run performs the call. progress, when not nil, receives output as it
	// is produced (a command's output, for example) so editors can stream it.
	Run func(ctx context.Context, progress func(chunk string)) Result
}

// Approval is what the person sees before deciding. Secrets never go here.
type Approval struct {
	Title string `json:"title"` // one line, e.g. "Run go test ./..." or "Edit main.go"
	// For commands.
	Command string `json:"command,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	// UnsavedFiles, for a command, are the files open in the editor with
	// changes not saved to disk (as the tool displays paths): the command
	// reads the disk, so it does not see them. Warning says so too.
	UnsavedFiles []string `json:"unsavedFiles,omitempty"`
	// For file changes: every file the call touches, with its full diff.
	Diffs []Diff `json:"diffs,omitempty"`
	// For MCP calls (spec 000 section 1).
	Server      string `json:"server,omitempty"`
	Destination string `json:"destination,omitempty"`
	Tool        string `json:"serverTool,omitempty"` // the tool's name on its server (the exposed name is the request's "tool")
	Arguments   string `json:"arguments,omitempty"`  // pretty JSON, cut at 2 KiB
	Warning     string `json:"warning,omitempty"`

	// Grant is the scope an "always allow" decision covers. Empty means the
	// call offers no "always allow" option.
	Grant *Grant `json:"grant,omitempty"`
	// AlwaysAsk is set for calls that must be asked whatever the grants
	// (a write outside the workspace or to a sensitive path).
	AlwaysAsk bool `json:"alwaysAsk,omitempty"`
	// AutoAllow marks a call that may run without asking (an MCP tool the
	// approved server declared read-only in its initial list).
	AutoAllow bool `json:"-"`

	// Sandbox says, for commands, how the command runs: confined or not,
	// with network or not, and what it may change.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// AutoEditAllows marks a command that the auto-edit mode may run
	// without asking: it is confined and network-less (Sandbox.Contained)
	// and the person turned on autoApproveSandboxedCommands. Nothing reads
	// it outside that mode; an unconfined command never has it.
	AutoEditAllows bool `json:"-"`
}

// Sandbox is how a command runs, as the approval shows it.
type Sandbox struct {
	// Confined is true when kin's sandbox confines the command. False means
	// it runs with the person's full access to files and the network.
	Confined bool `json:"confined"`
	// Network is true when the command can reach the network (always, when
	// it is not confined).
	Network bool `json:"network"`
	// Writable lists the folders a confined command may change (besides a
	// private temporary directory of its own); absent when not confined.
	Writable []string `json:"writable,omitempty"`
}

// Contained reports whether a command is confined and network-less: the
// only commands a mode may ever run without asking.
func (s *Sandbox) Contained() bool { return s != nil && s.Confined && !s.Network }

// Grant names what "always allow" would cover.
type Grant struct {
	// Key is the grant's identity: "bash:go test", "tool:write_file",
	// "mcp:sha256:<launch hash>/query" (an MCP tool: its server's launch
	// identity and its name on that server). Shell and MCP keys never mix.
	Key string `json:"key"`
	// Fingerprint, set for MCP tools, identifies the definition shown
	// (description, input schema, annotations): a grant answers only calls
	// of the definition it was given for.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Label says what it covers, without saying for how long: "Always allow
	// `go test` commands". The approval's options add "in this session" or
	// "in every session".
	Label string `json:"label"`
}

// Diff is one file's proposed change.
type Diff struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"` // empty for a new file
	NewText string `json:"newText"`
	Unified string `json:"unified"` // full unified diff, ready to show
}

// Content is one piece of what a call produced, in ACP's shapes.
type Content struct {
	Type string `json:"type"` // "text", "diff", "terminal"
	Text string `json:"text,omitempty"`
	Diff *Diff  `json:"diff,omitempty"`
}

// Result is a call's outcome.
type Result struct {
	Status Status `json:"status"`
	// Output goes back to the model (already framed and cut by the tool
	// where it needs to be; the loop enforces MaxOutput regardless).
	Output string `json:"output"`
	// Content is what an editor shows on the tool card.
	Content []Content `json:"content,omitempty"`
	// Saw is what the tool knows of how Output was made from what it got
	// (framing, structured content, cuts); nil when Output is all there is.
	Saw *Saw `json:"saw,omitempty"`
	// Links are the resource links an MCP result gave (resource_link
	// blocks), for the person to open; the model reads them with
	// read_mcp_resource.
	Links []Link `json:"links,omitempty"`
	// Open says the call's work goes on elsewhere and kin stopped before
	// it ended (an MCP task on record, left running: see Stopping): the
	// turn records no result, so the call stays open in the session log
	// and the next kin follows it. Status and Output are what anything
	// that does not know this records instead (unknown: it may happen).
	Open bool `json:"-"`
}

// Failed is a shorthand for a failed result with a message.
func Failed(msg string) Result { return Result{Status: StatusFailed, Output: msg} }

// Source provides tools. The set may change while a session runs (MCP
// servers connect, refetch their lists); the turn loop asks again before
// each model request.
type Source interface {
	Tools() []Tool
}

// Arriving is a Source some of whose tools are still on their way: MCP
// servers still connecting (only ones that are allowed to start and need
// nobody to do anything; never one that failed or waits for an approval or
// a sign-in). A turn waits for them before its first model request, so that
// a question asked right after the editor opened finds their tools.
type Arriving interface {
	// Arriving names what is on its way, and the longest it may take.
	Arriving() (names []string, within time.Duration)
	// AwaitArrived returns once none of it is on its way any more (each
	// connected or failed), or when ctx ends.
	AwaitArrived(ctx context.Context)
}

// Static is a fixed set of tools.
type Static []Tool

// Tools implements Source.
func (s Static) Tools() []Tool { return s }
