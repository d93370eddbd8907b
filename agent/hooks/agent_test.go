package hooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kin-dev/kin/agent/hooks"
)

// judge is an agent hook's judge whose requests are scripted: each step
// answers with the next of answers ("" with more to come: it made calls),
// or waits for its context when stall; allowErrs are the checks' answers
// before each request.
type judge struct {
	answers   []string
	stall     bool
	allowErrs []error
	allows    int
	steps     int
	q         hooks.PromptRequest
}

func (j *judge) Allow(context.Context) (func(), error) {
	j.allows++
	if len(j.allowErrs) >= j.allows && j.allowErrs[j.allows-1] != nil {
		return nil, j.allowErrs[j.allows-1]
	}
	return func() {}, nil
}

func (j *judge) Step(ctx context.Context) (string, bool, error) {
	j.steps++
	if j.stall {
		<-ctx.Done()
		return "", false, ctx.Err()
	}
	if len(j.answers) == 0 {
		return "", false, nil // calls again, for ever
	}
	a := j.answers[0]
	j.answers = j.answers[1:]
	return a, a != "", nil
}

// judging is an Asker that starts j for agent hooks.
type judging struct {
	asker
	j *judge
}

func (a *judging) Judge(q hooks.PromptRequest) hooks.Judge {
	a.j.q = q
	return a.j
}

func agentHook(ev hooks.Event, timeout time.Duration) hooks.Hook {
	return hooks.Hook{Event: ev, Type: hooks.TypeAgent, Prompt: "Check the policy file, then judge $ARGUMENTS", Timeout: timeout, Owner: hooks.Person}
}

// An agent hook's judge may make requests (calls) before its verdict,
// which acts as a prompt hook's does; the limits are checked before each
// request; without a verdict in MaxAgentRequests requests or in its
// timeout, or refused by a limit, or answering nonsense, it blocks
// nothing; without an AgentAsker it cannot run.
func TestAgentHookRuns(t *testing.T) {
	_, ws, r := setup(t)
	in := hooks.Input{SessionID: "s1", Cwd: ws, ToolName: "Bash", KinToolName: "bash", ToolInput: json.RawMessage(`{"command":"rm -rf /"}`)}
	j := &judge{answers: []string{"", "", `{"ok": false, "reason": "the policy forbids rm"}`}}
	r.Ask = &judging{j: j}
	res := r.Run(context.Background(), agentHook(hooks.PreToolUse, time.Second), in)
	if !res.Block || res.Decision != "deny" || res.Reason != "the policy forbids rm" || res.Failure != "" {
		t.Fatalf("ok:false after two requests with calls: %+v", res)
	}
	if j.steps != 3 || j.allows != 3 {
		t.Errorf("%d requests, %d checks; want 3 and 3", j.steps, j.allows)
	}
	if q := j.q; q.Instructions != *hooks.AgentText || !strings.HasPrefix(q.Instructions, *hooks.PromptText) ||
		!strings.HasPrefix(q.Text, "Check the policy file, then judge {") || !strings.Contains(q.Text, `"tool_input":{"command":"rm -rf /"}`) {
		t.Errorf("the judge's request: %+v", q)
	}

	*j = judge{answers: []string{`{"ok": false}`}}
	if res := r.Run(context.Background(), agentHook(hooks.Stop, time.Second), in); !res.Block || !strings.Contains(res.Reason, "an agent hook") {
		t.Errorf("ok:false without a reason: %+v", res)
	}
	*j = judge{answers: []string{`{"ok": false, "impossible": true, "reason": "no network"}`}}
	if res := r.Run(context.Background(), agentHook(hooks.Stop, time.Second), in); res.Block || !strings.Contains(res.Message, "no network") {
		t.Errorf("impossible at Stop: %+v", res)
	}

	*j = judge{}
	res = r.Run(context.Background(), agentHook(hooks.PreToolUse, 10*time.Second), in)
	if res.Block || !strings.Contains(res.Failure, "no verdict within 50 model requests") || j.steps != hooks.MaxAgentRequests {
		t.Errorf("a judge that never answers: %d requests, %+v", j.steps, res)
	}

	*j = judge{stall: true}
	start := time.Now()
	res = r.Run(context.Background(), agentHook(hooks.PreToolUse, 200*time.Millisecond), in)
	if res.Block || !strings.Contains(res.Failure, "no verdict within 200ms") || !strings.Contains(res.Failure, "blocks nothing") || time.Since(start) > 5*time.Second {
		t.Errorf("a judge that stalls: %+v", res)
	}

	*j = judge{answers: []string{"", `{"ok": false, "reason": "x"}`}, allowErrs: []error{nil, errors.New("a spend limit: kin stopped")}}
	res = r.Run(context.Background(), agentHook(hooks.PreToolUse, time.Second), in)
	if res.Block || !strings.Contains(res.Failure, "not sent (a spend limit") || j.steps != 1 {
		t.Errorf("a limit refusing its second request: %d requests, %+v", j.steps, res)
	}

	*j = judge{answers: []string{"I looked, and it seems fine."}}
	if res := r.Run(context.Background(), agentHook(hooks.PreToolUse, time.Second), in); res.Block || !strings.Contains(res.Failure, `is not {"ok"`) {
		t.Errorf("no verdict: %+v", res)
	}

	r.Ask = &asker{answer: `{"ok": false, "reason": "x"}`}
	if res := r.Run(context.Background(), agentHook(hooks.PreToolUse, time.Second), in); res.Block || !strings.Contains(res.Failure, "agent hooks cannot run here") {
		t.Errorf("an Asker that starts no judge: %+v", res)
	}
}
