package hooks

import (
	"context"
	_ "embed"
	"fmt"
)

// agentSystem is what the judge of an agent hook is told: a prompt hook's
// instructions, and what its tools are for.
//
//go:embed agent.md
var agentNote string

var agentSystem = promptSystem + "\n" + agentNote

// Judge is one agent hook's judge: a short conversation with the
// session's model, which may read the workspace with kin's read-only file
// tools before it answers as a prompt hook's model does.
type Judge interface {
	// Allow is the check before each of the judge's requests (the spend
	// limits, which may ask the person), as Asker's Allow: not bounded by
	// the hook's timeout. The request's hold is let go with release, after
	// Step (or when it is not sent after all).
	Allow(ctx context.Context) (release func(), err error)
	// Step sends the judge's next request (the conversation so far) and
	// runs the calls its answer asks for; done, with the answer's text,
	// when it asked for none. Its usage counts as the session's. ctx ends
	// at the hook's timeout.
	Step(ctx context.Context) (answer string, done bool, err error)
}

// AgentAsker starts agent hooks' judges; the caller decides which tools
// they are offered and runs their calls (package agent: the built-in
// read-only file tools, within the session's trust boundary, nothing that
// would need the person's approval).
type AgentAsker interface {
	Judge(q PromptRequest) Judge
}

// runAgent runs an agent hook: its judge reads what it needs, then
// answers {"ok": ...} as a prompt hook's model does; the verdict is read
// and acted on as a prompt hook's. A judge that does not answer within
// the hook's timeout or MaxAgentRequests requests, or fails, blocks
// nothing.
func (r Runner) runAgent(ctx context.Context, h Hook, input []byte) Result {
	res := Result{Hook: h}
	aa, ok := r.Ask.(AgentAsker)
	if !ok {
		res.Failure = "agent hooks cannot run here (no model service); it blocks nothing"
		return res
	}
	j := aa.Judge(PromptRequest{Hook: h, Model: h.Model, Instructions: agentSystem, Text: buildPrompt(h.Prompt, input)})
	// the first check may ask the person about a spend limit: the
	// judge's time starts once it is answered, as a prompt hook's does
	release, err := j.Allow(ctx)
	if f := notSent(ctx, err); f != "" {
		res.Failure = f
		return res
	}
	// the hold of the request about to go; each is let go once its Step
	// counted it, the last also when the judge ends before its Step
	defer func() { release() }()
	tctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	late := fmt.Sprintf("its judge gave no verdict within %v", h.Timeout)
	for n := 1; ; n++ {
		answer, done, err := j.Step(tctx)
		release()
		if f := failed(ctx, tctx, err, late); f != "" {
			res.Failure = f
			return res
		}
		if done {
			return judged(res, answer)
		}
		if n == MaxAgentRequests {
			res.Failure = fmt.Sprintf("its judge gave no verdict within %d model requests; it blocks nothing", MaxAgentRequests)
			return res
		}
		// later checks run on the judge's time: a person answering a
		// limit's question is not cut off (the turn's ctx), but the judge
		// does not go on past its timeout once they answered
		next, err := j.Allow(ctx)
		if f := notSent(ctx, err); f != "" {
			res.Failure = f
			return res
		}
		release = next
		if tctx.Err() != nil {
			res.Failure = late + "; it blocks nothing"
			return res
		}
	}
}
