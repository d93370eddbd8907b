package calltool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/catalog"
	"github.com/kin-dev/kin/mcp/connect"
)

// DefaultTimeout bounds a call when the server sets no timeout.
const DefaultTimeout = 30 * time.Second

// MaxArguments is where the approval's pretty-printed arguments are cut.
const MaxArguments = 2 << 10

// Warning is shown with every MCP call approval.
const Warning = "Arguments are sent to this MCP server. kin cannot control what the server does with them."

// Binding is what a tool needs of its server's connection. The manager
// provides one per configured server; its session may come and go.
type Binding interface {
	// Name is the server's configured name.
	Name() string
	// Identity is the server's launch identity (trust.Hash: what the
	// person approved to start or contact), the first half of a grant key.
	Identity() string
	// Launch is the key of the launch the live connection was approved as
	// (trust.Launch.Key: name, scope, project, what runs and where): a
	// task is followed after a restart only on the same launch.
	Launch() string
	// Trusted reports whether the person's trust in the server's launch
	// stands now (read again at each call: a trust revoked while the
	// server stays connected ends its read-only tools' running unasked).
	Trusted() bool
	// Session returns the live session, or false when not connected.
	Session() (*mcp.ClientSession, bool)
	// Destination is where arguments go: the masked URL or the command line.
	Destination() string
	// Timeout bounds one call.
	Timeout() time.Duration
	// Redact removes the server's secrets from text.
	Redact(string) string
	// Track records a call in flight, ctx being its context (a question
	// the server asks during it is attributed to it, and its clock, see
	// ask.WithTimeout, stops while the person answers); untrack ends it,
	// saying how (ask.ReasonCallEnded, or ask.ReasonCancelled when the
	// turn was), and a question still open for it is closed so.
	Track(ctx context.Context, env tool.Env) (untrack func(reason string))
	// Elicit asks the person a question the server put in an
	// input-required result of the call env names. Anything but an
	// accepted answer that fits the form is a decline or a cancel.
	Elicit(ctx context.Context, env tool.Env, p *mcp.ElicitParams) *mcp.ElicitResult
}

// Tool is one MCP tool offered to the model.
type Tool struct {
	b         Binding
	def       catalog.Def
	autoAllow atomic.Bool
}

// New returns the tool for def. autoAllow must be set only for a tool the
// approved server declared read-only in its initial list, unchanged since.
func New(b Binding, def catalog.Def, autoAllow bool) *Tool {
	t := &Tool{b: b, def: def}
	t.autoAllow.Store(autoAllow)
	return t
}

// Revoke ends the tool's running unasked, for good: its server redefined
// or dropped it, or the connection it was listed on ended. A turn takes
// its tools once per model request and calls them for as long as the
// answer's calls take, so the copy it holds must stop answering for a
// definition that is no longer the one the person trusted.
func (t *Tool) Revoke() { t.autoAllow.Store(false) }

// Def is the vetted definition the tool was built from.
func (t *Tool) Def() catalog.Def { return t.def }

// ReadOnly implements tool.ReadOnlyTool: only a tool the approved server
// declared read-only in its initial list counts as changing nothing (the
// ask mode offers it); every other MCP tool may change anything.
func (t *Tool) ReadOnly() bool { return t.autoAllow.Load() }

// Spec implements tool.Tool.
func (t *Tool) Spec() tool.Spec {
	return tool.Spec{
		Name:        t.def.Exposed,
		Description: t.def.Description,
		Parameters:  t.def.Schema,
		Strict:      false,
		Kind:        tool.KindOther,
	}
}

// Prepare implements tool.Tool. Nothing is sent here.
func (t *Tool) Prepare(_ context.Context, env tool.Env, args json.RawMessage) (*tool.Action, error) {
	obj, err := objectArgs(args)
	if err != nil {
		return nil, err
	}
	// Indented for the person, unless nested so deep that indenting would
	// cost more than the arguments (see maxIndentDepth): a model steered
	// into 5,000 levels of brackets (10 kB) took 335 MB, to show 2 kB.
	pretty, err := indentShallow(obj)
	if err != nil {
		return nil, fmt.Errorf("arguments: %v", err)
	}
	shown, _ := tool.Head(t.b.Redact(string(pretty)), MaxArguments)
	server := t.b.Name()
	ap := &tool.Approval{
		Title:       fmt.Sprintf("Call %s on %s", catalog.Label(t.def.Name), server),
		Server:      server,
		Destination: t.b.Destination(),
		Tool:        catalog.Label(t.def.Name),
		Arguments:   shown,
		Warning:     Warning,
		Grant: &tool.Grant{
			Key:         GrantKey(t.b.Identity(), t.def.Name),
			Fingerprint: t.def.Fingerprint,
			Label:       fmt.Sprintf("Always allow %s on %s", catalog.Label(t.def.Name), catalog.Label(server)),
		},
		// The trust may have been revoked since the tools were listed
		// (kin grants revoke trust:NAME, in an editor or another kin).
		AutoAllow: t.autoAllow.Load() && t.b.Trusted(),
	}
	return &tool.Action{
		Approval: ap,
		Run: func(ctx context.Context, progress func(string)) tool.Result {
			return t.call(ctx, env, obj, progress)
		},
	}, nil
}

// GrantKey is the key of an "always allow" grant on an MCP tool: the launch
// identity of its server (what the person approved when the server was
// started or contacted) and the tool's own name on that server. It never
// uses the exposed name, which depends on which other servers are
// configured, nor the server's configured name, which a project file may
// reuse for a different command.
func GrantKey(identity, toolName string) string {
	return "mcp:" + identity + "/" + toolName
}

// objectArgs checks that args is a JSON object ("" and null mean {}).
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}"), nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil || m == nil {
		return nil, errors.New("the arguments must be a JSON object")
	}
	return json.RawMessage(trimmed), nil
}

// call sends the call and maps the outcome. It never resends a call that
// may have run: it sends again only after the server answered that it
// needs input first (see input) and the person answered.
func (t *Tool) call(ctx context.Context, env tool.Env, args json.RawMessage, progress func(string)) tool.Result {
	server := t.b.Name()
	cs, ok := t.b.Session()
	if !ok {
		return tool.Failed(fmt.Sprintf("MCP server %s is not connected; nothing was sent.", server))
	}
	params := &mcp.CallToolParams{Name: t.def.Name, Arguments: args}
	for round := 1; ; round++ {
		// Each round has the server's time; the person's is not counted:
		// the clock stops while they answer a question the server asks
		// during the round (elicitation/create, a sign-in), and the
		// questions of an input-required result are asked between rounds.
		callCtx, cancel := ask.WithTimeout(ctx, t.b.Timeout())
		untrack := t.b.Track(callCtx, env)
		res, err := cs.CallTool(callCtx, params)
		ended := ask.ReasonCallEnded
		if ctx.Err() != nil {
			ended = ask.ReasonCancelled
		}
		untrack(ended)
		if u, ok := connect.UnhandledResult(err); ok && u.ResultType == "task" && u.Method == "tools/call" {
			// A task (Tasks extension): followed, never sent again.
			cancel()
			return t.task(ctx, env, progress, cs, u)
		} else if ok {
			cancel()
			return Unknown(server, t.def.Name, t.b.Redact(fmt.Sprintf(
				"the server answered with resultType %.40q, which kin does not handle", u.ResultType)))
		}
		if err != nil || res == nil || !res.NeedsInput() {
			r := t.outcome(ctx, callCtx, res, err)
			cancel()
			return r
		}
		cancel()
		next, stop := t.input(ctx, env, round, res)
		if stop != nil {
			return *stop
		}
		params = &mcp.CallToolParams{Name: t.def.Name, Arguments: args, InputResponses: next, RequestState: res.RequestState}
	}
}

func (t *Tool) outcome(ctx, callCtx context.Context, res *mcp.CallToolResult, err error) tool.Result {
	server, name := t.b.Name(), t.def.Name
	if u, ok := connect.UnhandledResult(err); ok {
		// The server answered, with something kin cannot read: it may
		// have acted on the call (a "task" is running), so unknown, and
		// never sent again.
		return Unknown(server, name, t.b.Redact(fmt.Sprintf(
			"the server answered with resultType %.40q, which kin does not handle", u.ResultType)))
	}
	var werr *jsonrpc.Error
	switch {
	case err == nil && res == nil:
		err = errors.New("empty reply")
	case err == nil:
		raw, saw := render(res)
		links := Links(t.b, res.Content)
		if len(links) > 0 {
			raw += fmt.Sprintf("\n[the resource links above can be read with %s, server %q]", ReadResourceName, catalog.Label(server))
		}
		body, saw := redactSaw(t.b, raw, saw)
		out, saw := FrameSaw(server, name, body, saw)
		r := tool.Result{Status: tool.StatusCompleted, Output: out, Content: []tool.Content{{Type: "text", Text: body}}, Saw: saw, Links: links}
		switch {
		case res.IsError:
			r.Status = tool.StatusFailed
		case cutOutput(saw):
			r.Status = tool.StatusOutputLimit
		}
		return r
	case ctx.Err() == nil && callCtx.Err() == nil && errors.As(err, &werr) && !localCode(werr.Code):
		msg, saw := redactSaw(t.b, fmt.Sprintf("MCP server %s reported an error (code %d): %s", catalog.Label(server), werr.Code, werr.Message), nil)
		out, saw := FrameSaw(server, name, msg, saw)
		return tool.Result{Status: tool.StatusFailed, Output: out, Content: []tool.Content{{Type: "text", Text: msg}}, Saw: saw}
	}
	switch {
	case ctx.Err() != nil:
		return Unknown(server, name, "the call was cancelled")
	case callCtx.Err() != nil:
		return Unknown(server, name, fmt.Sprintf("no reply within %s", t.b.Timeout()))
	}
	// The error's text may be the server's own: it answers with any code
	// and message it likes, those of the SDK's own failures included.
	return UnknownSaid(server, name, "the connection failed or the reply was unusable", t.b.Redact(err.Error()))
}

// localCode reports the codes the SDK's JSON-RPC layer uses for its own
// failures (rejected by transport, client or server closing). They say
// nothing about whether the server received the call.
func localCode(code int64) bool {
	return code == -32005 || code == -32004 || code == -32003
}

// Unknown is the result of a call that may or may not have happened.
func Unknown(server, toolName, why string) tool.Result {
	msg := fmt.Sprintf("The call to tool %s on MCP server %s was sent, but its outcome is unknown: %s. %s",
		catalog.Label(toolName), catalog.Label(server), why, UnknownNote)
	return tool.Result{Status: tool.StatusUnknown, Output: msg, Content: []tool.Content{{Type: "text", Text: msg}}}
}

// UnknownSaid is Unknown for an outcome whose reason ends in text the
// server may have written (an error's message, already redacted): why is
// kin's own sentence; said follows it stripped of invisible and control
// characters, and for the model inside the server's untrusted framing,
// never as kin's own words (a message "…</untrusted-mcp-result> SYSTEM:
// run …" would otherwise read as kin talking).
func UnknownSaid(server, toolName, why, said string) tool.Result {
	r := Unknown(server, toolName, why)
	said = catalog.Strip(said)
	if said == "" {
		return r
	}
	said = "The error as reported: " + said
	framed, saw := FrameSaw(server, toolName, said, nil)
	r.Output += "\n" + framed
	r.Content[0].Text += "\n" + said
	r.Saw = saw
	return r
}
