package agent

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

// DelegateToolName is the delegate tool's name; MCP tools may not take it.
const DelegateToolName = "delegate"

// maxTaskBytes bounds a delegate call's task: it is the subagent's
// question, and a model that writes more should name files instead.
const maxTaskBytes = 64 << 10

//go:embed delegate.md
var delegateDescription string

const delegateSchema = `{
  "type": "object",
  "properties": {
    "task": {"type": "string", "description": "The whole task, self-contained: the subagent sees nothing of this conversation."},
    "mode": {"type": "string", "enum": ["ask", "agent", "auto-edit"], "description": "ask (default): read only. agent: may change files and run commands, each asked. Never more than this session's mode."}
  },
  "required": ["task"],
  "additionalProperties": false
}`

// delegateTool is delegate for one turn: it runs a subagent (a child
// session) on a task and returns its final answer.
//
// Someone else reaches it: the model chooses the task and asks for a mode.
// The trust boundary's answer is that the call gives the subagent nothing
// its parent does not have: the parent's folders and workspace boundary,
// a mode never wider than the parent's (whatever the call asks for), every
// call of the subagent through the same gate, its questions to the same
// person. What the call itself could cost is bounded: at most
// subagents.maxRunning run at once, and a subagent is offered delegate
// only below subagents.maxDepth.
type delegateTool struct{ t *turn }

func (delegateTool) Spec() tool.Spec {
	return tool.Spec{Name: DelegateToolName, Description: strings.TrimSpace(delegateDescription),
		Parameters: json.RawMessage(delegateSchema), Kind: tool.KindOther}
}

// ReadOnly implements tool.ReadOnlyTool: the call itself changes nothing,
// and in ask mode its subagent is in ask mode too, so the ask mode offers
// it; a subagent in another mode has each of its own calls decided by the
// gate.
func (delegateTool) ReadOnly() bool { return true }

// delegation is one delegate call, prepared.
type delegation struct {
	callID, args, title string
	task                string
	// mode is the subagent's: what the call asked for (ask when it asked
	// for nothing), narrowed to the parent's.
	mode permission.Mode
}

func (d delegateTool) Prepare(_ context.Context, env tool.Env, args json.RawMessage) (*tool.Action, error) {
	task, asked, err := parseDelegate(args)
	if err != nil {
		return nil, err
	}
	mode := permission.Narrower(asked, d.t.mode())
	job := delegation{callID: env.CallID, args: string(args), task: task, mode: mode,
		title: fmt.Sprintf("Subagent (%s): %s", mode, titleFrom(task))}
	// No approval of its own (AutoAllow): what the subagent does is
	// approved call by call. The approval carries the title every front
	// end shows on the call.
	return &tool.Action{Approval: &tool.Approval{Title: job.title, AutoAllow: true},
		Run: func(ctx context.Context, _ func(string)) tool.Result { return d.t.delegate(ctx, job) }}, nil
}

// parseDelegate checks delegate's arguments, with messages a model can act
// on. A mode left out is ask.
func parseDelegate(args json.RawMessage) (string, permission.Mode, error) {
	var in struct {
		Task *string `json:"task"`
		Mode string  `json:"mode"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return "", "", fmt.Errorf("%s: the arguments must be {\"task\", \"mode\"?}: %v", DelegateToolName, err)
	}
	if in.Task == nil || strings.TrimSpace(*in.Task) == "" {
		return "", "", fmt.Errorf("%s: the argument \"task\" is required and must say what to do", DelegateToolName)
	}
	if len(*in.Task) > maxTaskBytes {
		return "", "", fmt.Errorf("%s: the task is %d bytes, more than %d; name the files the subagent should read instead of quoting them", DelegateToolName, len(*in.Task), maxTaskBytes)
	}
	mode := permission.ModeAsk
	if in.Mode != "" {
		m, err := permission.ParseMode(in.Mode)
		if err != nil {
			return "", "", fmt.Errorf("%s: %v", DelegateToolName, err)
		}
		mode = m
	}
	return strings.TrimSpace(*in.Task), mode, nil
}
