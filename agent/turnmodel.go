package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// view is how the turn's requests see the conversation.
func (t *turn) view() view {
	on, _ := t.client.Reasoning()
	return view{model: t.cfg.Model, reasoning: on, budget: outputBudget(t.cfg.Window())}
}

// request sends the conversation to the model once: text (and a refusal)
// streams to the editor and the log, each message of the answer its own
// item, reasoning to the editor, reasoning items to the log (before what
// they led to), and the usage is reported after.
func (t *turn) request(ctx context.Context, specs []tool.Spec) (*model.Response, error) {
	v := t.view()
	// Spend limits hold before every request (limits.go); about is the
	// request's input as kin estimates it.
	about := t.sess.estimate(len(t.instructions), v.budget)
	release, err := t.withinLimits(ctx, about)
	if err != nil {
		return nil, err
	}
	// the request holds its estimate against the limits until its usage
	// is counted (countUsage, below) or it is not sent after all
	defer release()
	input, err := t.sess.input(v)
	if err != nil {
		return nil, fmt.Errorf("reading the session log: %w", err)
	}
	// The mode may change mid-turn (the gate reads it for every call): the
	// request says the mode of the moment.
	instr := t.instructions + t.hookNote() + modeNote(t.mode()) + t.serverNote() + t.toolNote + t.spec.instructions
	if t.parent != nil {
		instr += subagentNote
	}
	// shown says text was shown, ended that a message ended since: the
	// next message is set apart by a blank line on screen, so two messages
	// never run together ("Got itHere are"); each is its own item in the
	// log.
	shown, ended := false, false
	// text is what this request's answer showed: a subagent's last one is
	// what its delegate call reports (see turn.final).
	var text strings.Builder
	defer func() {
		if text.Len() > 0 {
			t.final = text.String()
		}
	}()
	show := func(d string, refusal bool) {
		if d == "" {
			return
		}
		if shown && ended {
			t.events().Delta(Delta{SessionID: t.sess.id, TurnID: t.id, Text: "\n\n", Refusal: refusal})
			text.WriteString("\n\n")
		}
		if text.Len() < 2*tool.MaxOutput {
			text.WriteString(d)
		}
		shown, ended = true, false
		t.answer.add(d, refusal) // first: what an editor was shown is always on its way to the log
		t.events().Delta(Delta{SessionID: t.sess.id, TurnID: t.id, Text: d, Refusal: refusal})
	}
	resp, err := t.client.Stream(ctx, model.Request{Instructions: instr, Input: input, Tools: specs, Effort: t.effort}, model.Handlers{
		Text:    func(d string) { show(d, false) },
		Refusal: func(d string) { show(d, true) },
		Message: func(m model.AssistantMessage) {
			t.answer.end(m.Phase)
			ended = true
		},
		Reasoning: func(d string) {
			t.events().Reasoning(ReasoningDelta{SessionID: t.sess.id, TurnID: t.id, Text: d})
		},
		ReasoningDone: func(r model.Reasoning) {
			t.answer.end("") // a reasoning item starts a new output item
			t.record(session.Record{Type: session.TypeReasoning, ItemID: r.ID, Summary: r.Summary, Encrypted: r.Encrypted,
				Text: r.Text, Field: r.Field, Model: t.cfg.Model})
		},
		Notice: t.modelNotice,
	})
	t.answer.end("")
	if !billed(resp) {
		return resp, err
	}
	// A request that ran counts however it ended (cancelled, failed, cut
	// short): a service that never completes an answer is billed all the
	// same, and the spend limits must see it.
	t.countUsage(estimated(resp.Usage, about, answerBytes(resp)))
	if ctx.Err() != nil || (err != nil && resp.Usage == (model.Usage{})) {
		return resp, err
	}
	t.usage.ContextWindow = t.cfg.Window()
	if used := resp.Usage.InputTokens + resp.Usage.OutputTokens; used > 0 {
		t.usage.ContextTokens = used
		t.sess.observe(used, v.budget)
	} else {
		// A service that reports no usage: kin's own estimate.
		t.usage.ContextTokens = t.sess.estimate(len(t.instructions), v.budget)
	}
	t.events().Usage(UsageUpdate{SessionID: t.sess.id, TurnID: t.id, Usage: t.usage})
	return resp, err
}

// fallBack moves a session whose model kin no longer has to the default,
// on record, and says so.
func (t *turn) fallBack() {
	if t.fellBack == "" {
		return
	}
	if _, ok := t.record(session.Record{Type: session.TypeConfigure, Model: t.cfg.Model, Effort: t.effort}); ok {
		t.sess.mu.Lock()
		t.sess.model = t.cfg.Model
		t.sess.mu.Unlock()
	}
	t.events().Notice(Notice{Level: "warning", Source: "model", SessionID: t.sess.id,
		Message: fmt.Sprintf("This session used the model %s, which is not in $KIN_HOME/settings.json any more; it goes on with %s.", t.fellBack, t.cfg.Model)})
}

// touchedPaths are the paths a call's arguments name (path, and a
// command's cwd): the directories on their way may have instructions.
func touchedPaths(args string) []string {
	var a struct {
		Path string `json:"path"`
		Cwd  string `json:"cwd"`
	}
	if json.Unmarshal([]byte(args), &a) != nil {
		return nil
	}
	var out []string
	for _, p := range []string{a.Path, a.Cwd} {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// observe notes the model's count of the context's tokens.
func (sess *Session) observe(tokens int64, budget int) {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.conv != nil {
		sess.conv.observe(tokens, budget)
	}
}

// question names a turn of the session by its question's first words (""
// when the conversation does not hold it).
func (sess *Session) question(turn string) string {
	if _, err := sess.conversation(); err != nil {
		return ""
	}
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.conv == nil {
		return ""
	}
	return sess.conv.question(turn)
}

// estimate is how many tokens the next request would take.
func (sess *Session) estimate(extra, budget int) int64 {
	sess.wmu.Lock()
	defer sess.wmu.Unlock()
	if sess.conv == nil {
		return 0
	}
	return sess.conv.estimate(extra, budget)
}
