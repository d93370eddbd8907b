package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent/builtin"
	"github.com/kin-dev/kin/agent/hooks"
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/spend"
	"github.com/kin-dev/kin/agent/tool"
)

// This file runs agent hooks' judges (package hooks drives them: the
// requests, the timeout, the verdict). A judge is not a subagent: it has
// no session (nothing is stored, listed or shown to the editor but the
// hook's notices), and its calls never reach the gate, the hooks or the
// person. It is the prompt hooks' one request (hookmodel.go: the turn's
// service, the spend limits before each request, its usage counted as
// the turn's) with a loop of read-only calls:
//
//   - offered only kin's built-in file readers (builtin.ReadTools, each
//     also read-only by tool.ReadOnly and of kind read): no command, no
//     edit, no MCP tool (its read-only hint is its server's claim), no
//     delegate, ask, plan or skill;
//   - each call prepared by the tool with the session's tool.Env: the
//     session's file access and trust boundary, so a path outside the
//     workspace is refused as it is for the model (and so are the folders
//     of skills the model loaded, which the model may read);
//   - a call that would need the person's approval (a secret's read, a
//     tool a loaded skill's allowed-tools leave out) is denied, not asked:
//     nothing asks the person from inside a hook. The judge reads why and
//     goes on.

// judgeTools are the tools an agent hook's judge is offered.
func judgeTools() []tool.Tool {
	var out []tool.Tool
	for _, tl := range builtin.ReadTools() {
		// the list is builtin's; this says again what a judge may have
		if tool.ReadOnly(tl) && tl.Spec().Kind == tool.KindRead {
			out = append(out, tl)
		}
	}
	return out
}

// hookJudge is one agent hook's judge: its conversation so far.
type hookJudge struct {
	a      hookAsker
	q      hooks.PromptRequest
	cfg    model.Config
	client *model.Client
	tools  []tool.Tool
	specs  []tool.Spec
	input  []model.Item
	// size is the conversation's length in bytes, for the estimate the
	// spend limits are checked with.
	size int
	// calls numbers the judge's calls, for their ids in the turn's
	// tool.Env.
	calls int
}

// Judge starts an agent hook's judge on the turn's model service (the
// hook's model when it names one).
func (a hookAsker) Judge(q hooks.PromptRequest) hooks.Judge {
	cfg, client := a.target(q)
	j := &hookJudge{a: a, q: q, cfg: cfg, client: client, tools: judgeTools(),
		input: []model.Item{{Kind: model.Message, Role: "user", Text: q.Text}}, size: len(q.Instructions) + len(q.Text)}
	for _, tl := range j.tools {
		j.specs = append(j.specs, tl.Spec())
	}
	return j
}

func (j *hookJudge) about() int64 { return spend.Estimate(j.size) }

// Allow checks the spend limits before each of the judge's requests, as
// a prompt hook's request is checked.
func (j *hookJudge) Allow(ctx context.Context) (func(), error) {
	return j.a.allow(ctx, j.cfg.Model, j.about())
}

// Step sends the conversation and runs the calls the answer asks for.
func (j *hookJudge) Step(ctx context.Context) (string, bool, error) {
	t := j.a.t
	// the prompt, the input and what the judge reads are the person's,
	// the project's and the conversation's: not for kin's log above debug
	t.svc.log.Debug("agent hook request", zap.String("session", t.sess.id), zap.String("event", string(j.q.Hook.Event)),
		zap.String("model", j.cfg.Model), zap.Int("items", len(j.input)))
	about := j.about()
	resp, err := j.client.Stream(ctx, model.Request{Instructions: j.q.Instructions, Input: j.input, Tools: j.specs, Effort: j.a.effortFor(j.cfg)},
		model.Handlers{Notice: t.modelNotice})
	var u model.Usage
	if resp != nil {
		u = resp.Usage
	}
	j.a.charge(j.cfg, u, about, resp, err)
	switch {
	case err != nil:
		return "", false, err
	case resp.Refused():
		return "", false, errors.New("the model refused to judge it")
	case len(resp.Calls) == 0:
		return resp.Text, true, nil
	}
	// the answer goes back as the model gave it: what it reasoned (where
	// the service takes it back), said, and asked for, then each result
	for i := range resp.Reasoning {
		if r := resp.Reasoning[i]; r.CarriesOver() {
			j.input = append(j.input, model.Item{Kind: model.ReasoningItem, Reasoning: &r})
		}
	}
	for _, m := range resp.Messages {
		if m.Text != "" {
			j.input = append(j.input, model.Item{Kind: model.Message, Role: "assistant", Text: m.Text, Phase: m.Phase})
			j.size += len(m.Text)
		}
	}
	for _, c := range resp.Calls {
		j.input = append(j.input, model.Item{Kind: model.FunctionCall, CallID: c.CallID, Name: c.Name, Arguments: c.Arguments})
		j.size += len(c.Name) + len(c.Arguments)
	}
	for _, c := range resp.Calls {
		out := j.call(ctx, c)
		j.input = append(j.input, model.Item{Kind: model.FunctionOutput, CallID: c.CallID, Output: out})
		j.size += len(out)
	}
	return "", false, nil
}

// call runs one of the judge's calls, if it may run, and is what the
// judge reads of it. Nothing here asks anyone or runs a hook.
func (j *hookJudge) call(ctx context.Context, c model.Call) string {
	t := j.a.t
	var tl tool.Tool
	for _, x := range j.tools {
		if x.Spec().Name == c.Name {
			tl = x
		}
	}
	if tl == nil {
		names := make([]string, len(j.specs))
		for i, s := range j.specs {
			names[i] = s.Name
		}
		return tool.ModelText(string(tool.StatusDenied), fmt.Sprintf("not run: a hook's judge may call only %s; nothing was run.", strings.Join(names, ", ")))
	}
	if by := t.sess.narrowedBy(c.Name); by != "" {
		return tool.ModelText(string(tool.StatusDenied), fmt.Sprintf("not run: the skill %s, which is loaded, leaves %s out of its allowed-tools, so it would need the person's approval, which a hook's judge cannot ask.", by, c.Name))
	}
	args := json.RawMessage(c.Arguments)
	if strings.TrimSpace(c.Arguments) == "" {
		args = json.RawMessage("{}")
	}
	j.calls++
	// the session's files and boundary, without the read grants of the
	// skills the model loaded: those are the model's, and a judge reads
	// inside the workspace only
	env := t.sess.toolEnvFor(t.id, fmt.Sprintf("hook-judge-%d", j.calls), false)
	action, err := tl.Prepare(ctx, env, args)
	if err != nil {
		return tool.ModelText(string(tool.StatusFailed), err.Error())
	}
	if ap := action.Approval; ap != nil {
		// what the model may do only once the person says so, a judge
		// never does: nobody is asked from inside a hook
		why := ap.Title
		if ap.Warning != "" {
			why += ": " + ap.Warning
		}
		return tool.ModelText(string(tool.StatusDenied), "not run: this call needs the person's approval ("+why+"), which a hook's judge cannot ask; nothing was read.")
	}
	res := action.Run(ctx, nil)
	if res.Status == "" {
		res.Status = tool.StatusCompleted
	}
	res = res.CutToMax()
	return tool.ModelText(string(res.Status), res.Output)
}
