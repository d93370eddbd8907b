package hooks

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/boundary"
	"github.com/kin-dev/kin/agent/visible"
)

// promptSystem is what the model is told when it judges a prompt hook.
//
//go:embed prompt.md
var promptSystem string

// PromptRequest is a prompt hook's one request: no tools, kin's
// instructions, and one user message (the hook's prompt with its input).
type PromptRequest struct {
	Hook Hook
	// Model is the hook's model ("": the session's).
	Model        string
	Instructions string
	Text         string
}

// Asker sends prompt hooks' requests to the session's model service.
type Asker interface {
	// Allow is the check before the request (the spend limits, which may
	// ask the person): an error says why it is not sent. It is not bounded
	// by the hook's timeout: a person answering takes their time. When it
	// lets the request go, the request's estimate is held against the
	// limits (other requests checked meanwhile count it) until release is
	// called: after Send, which counts what it used, or when it is not
	// sent after all.
	Allow(ctx context.Context, q PromptRequest) (release func(), err error)
	// Send sends it and returns the model's answer text; its usage counts
	// as the session's. ctx ends at the hook's timeout.
	Send(ctx context.Context, q PromptRequest) (string, error)
}

// runPrompt asks the model whether the hook's condition holds: "ok":
// false blocks as a command hook's block does; anything else that is not
// a clear answer fails, blocking nothing.
func (r Runner) runPrompt(ctx context.Context, h Hook, input []byte) Result {
	res := Result{Hook: h}
	if r.Ask == nil {
		res.Failure = "prompt hooks cannot run here (no model service); it blocks nothing"
		return res
	}
	q := PromptRequest{Hook: h, Model: h.Model, Instructions: promptSystem, Text: buildPrompt(h.Prompt, input)}
	release, err := r.Ask.Allow(ctx, q)
	if f := notSent(ctx, err); f != "" {
		res.Failure = f
		return res
	}
	defer release()
	tctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	answer, err := r.Ask.Send(tctx, q)
	if f := failed(ctx, tctx, err, fmt.Sprintf("the model did not answer within %v", h.Timeout)); f != "" {
		res.Failure = f
		return res
	}
	return judged(res, answer)
}

// notSent is the failure of a request its check (the spend limits)
// refused ("" when err is nil).
func notSent(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return ""
	case ctx.Err() != nil:
		return "stopped: the turn was cancelled"
	}
	return "its request to the model was not sent (" + err.Error() + "); it blocks nothing"
}

// failed is the failure of a request that ended with err, or whose
// context (the turn's, ctx, or the hook's timeout, tctx) ended; late says
// the timeout's ("" when it did not fail).
func failed(ctx, tctx context.Context, err error, late string) string {
	switch {
	case ctx.Err() != nil:
		return "stopped: the turn was cancelled"
	case tctx.Err() != nil:
		return late + "; it blocks nothing"
	case err != nil:
		// a service's error may quote its URL: a key in its query is not
		// repeated
		return "the model service failed (" + boundary.MaskURLs(err.Error()) + "); it blocks nothing"
	}
	return ""
}

// judged is res with the model's final answer read as a verdict: the same
// for a prompt hook's one answer and an agent hook's judge's last.
func judged(res Result, answer string) Result {
	h := res.Hook
	v, err := parseVerdict(answer)
	if err != nil {
		res.Failure = `the model's answer is not {"ok": true|false, "reason": "..."} (` + err.Error() + "); it blocks nothing"
		return res
	}
	switch {
	case v.OK:
	case h.Event == Stop && v.Impossible:
		// the condition cannot be met: sending the model back would only
		// spend the turn's sends on it
		res.Message = "its condition cannot be met, so the model stops: " + v.Reason
	default:
		res.Block, res.Reason = true, v.Reason
		if res.Reason == "" {
			res.Reason = "blocked by a" + article(h.Type) + " " + h.Type + " hook (its model gave no reason)"
		}
		if h.Event == PreToolUse {
			res.Decision = "deny"
		}
	}
	return res
}

// buildPrompt is the hook's prompt with its input JSON for $ARGUMENTS, or
// after it when it has none (as Claude Code does). Nothing else is
// expanded: no environment variable reaches the model.
func buildPrompt(prompt string, input []byte) string {
	if strings.Contains(prompt, "$ARGUMENTS") {
		return strings.ReplaceAll(prompt, "$ARGUMENTS", string(input))
	}
	return strings.TrimRight(prompt, "\n") + "\n\n" + string(input)
}

// verdict is a prompt hook's answer.
type verdict struct {
	OK, Impossible bool
	Reason         string
}

// parseVerdict reads the model's answer: one JSON object with a boolean
// "ok", possibly in a code fence or with text around it. Objects without
// "ok" are passed over; several with "ok" count only when they agree.
func parseVerdict(answer string) (verdict, error) {
	text := strings.TrimSpace(answer)
	if text == "" {
		return verdict{}, errors.New("it was empty")
	}
	var found []verdict
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		i += j
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var m map[string]json.RawMessage
		if dec.Decode(&m) != nil {
			i++
			continue
		}
		i += int(dec.InputOffset())
		raw, ok := m["ok"]
		if !ok {
			continue
		}
		var v verdict
		if json.Unmarshal(raw, &v.OK) != nil {
			return verdict{}, fmt.Errorf(`its "ok" is %s, not true or false`, visible.Clip(string(raw), 41))
		}
		_ = json.Unmarshal(m["reason"], &v.Reason)
		_ = json.Unmarshal(m["impossible"], &v.Impossible)
		v.Reason = strings.TrimSpace(v.Reason)
		found = append(found, v)
	}
	switch {
	case len(found) == 0 && strings.Contains(text, "{"):
		return verdict{}, errors.New(`it has no JSON object with "ok"`)
	case len(found) == 0:
		return verdict{}, errors.New("it is not JSON")
	}
	for _, v := range found[1:] {
		if v.OK != found[0].OK {
			return verdict{}, errors.New(`it gave several answers that disagree`)
		}
	}
	return found[0], nil
}
