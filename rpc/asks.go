package rpc

import (
	"context"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
)

// kinAsker puts the questions of kin's own ask tool to the person: a form
// elicitation/request with "source":"kin" through the connection's broker,
// like an MCP server's. An editor that did not say it shows forms cannot
// answer: the question is declined at once as headless, and nothing is
// sent.
type kinAsker struct{ s *Server }

// SourceKin marks kin's own questions (elicitation/request's source).
const SourceKin = "kin"

func (k kinAsker) AskPerson(ctx context.Context, q agent.Question) agent.Reply {
	k.s.mu.Lock()
	forms := k.s.forms
	k.s.mu.Unlock()
	if !forms {
		return agent.Reply{Action: agent.ActionDecline, Reason: agent.ReasonHeadless}
	}
	return AskQuestion(ctx, k.s.asks, q)
}

// AskQuestion puts kin's question to the person through a broker, as a
// form checked by QuestionPolicy, and waits (kin serve's and kin acp's,
// once the front end knows the editor shows forms).
func AskQuestion(ctx context.Context, b *ask.Broker, q agent.Question) agent.Reply {
	asked, ans := b.Ask(ctx, ask.Question{Kind: ask.KindElicitation, SessionID: q.SessionID, Body: q}, QuestionPolicy(QuestionFields(q)))
	return agent.Reply{RequestID: asked.ID, Action: ans.Choice, Answers: ans.Content, Reason: ans.Reason}
}

// QuestionPolicy is how the person's answer to kin's own question is
// checked (kin serve's and kin acp's alike): an accept must fill the form
// (ask.Check), a decline or cancel carries nothing, and no answer at all
// is a cancel.
func QuestionPolicy(fields []ask.Field) ask.Policy { return formPolicy(fields, true) }

// QuestionFields are the form of kin's question: one required field per
// question, free text or a choice (several, for a multi-select question).
func QuestionFields(q agent.Question) []ask.Field {
	out := make([]ask.Field, 0, len(q.Items))
	for _, it := range q.Items {
		f := ask.Field{Name: it.Name, Title: it.Question, Type: ask.TypeString, Required: true}
		if len(it.Options) > 0 {
			f.Type = ask.TypeEnum
			if it.Multiple {
				f.Type = ask.TypeMultiSelect
			}
			for _, o := range it.Options {
				f.Choices = append(f.Choices, ask.Choice{Value: o})
			}
		}
		out = append(out, f)
	}
	return out
}

// kinElicitation is the elicitation/request of kin's question.
func kinElicitation(id string, q agent.Question) ElicitationRequest {
	out := ElicitationRequest{RequestID: id, SessionID: q.SessionID, Source: SourceKin, TurnID: q.TurnID, CallID: q.CallID,
		Mode: "form", Message: q.Message}
	for _, f := range QuestionFields(q) {
		out.Fields = append(out.Fields, elicitationField(f))
	}
	return out
}
