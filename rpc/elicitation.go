package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/mcp/manager"
)

// Elicitation actions.
const (
	actionAccept  = "accept"
	actionDecline = "decline"
	actionCancel  = "cancel"
)

// errInvalidAnswer is an elicitation/respond that does not answer its
// request (-32602); the request stays open.
var errInvalidAnswer = errors.New("the answer does not fit the request")

func handleElicitationRespond(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p ElicitationRespondParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RequestID == "" {
		return nil, invalid("invalid params: requestId is required")
	}
	if err := s.asks.Respond(ask.KindElicitation, p.RequestID, ask.Answer{Choice: p.Action, Content: p.Content}); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

// elicit asks the person an MCP server's question and waits. Anything not
// accepted with content that fits the form is a decline or a cancel, and
// only the outcome (never the answer) goes into the session log.
func (s *Server) elicit(ctx context.Context, r manager.ElicitRequest) manager.ElicitResult {
	svc, _ := s.service()
	return Elicit(ctx, s.asks, svc, r)
}

// Elicit asks the person an MCP server's question through a broker under
// ElicitPolicy, records the outcome in its session (when svc is given), and
// waits: kin serve's and kin acp's (once it knows the client takes the
// question's mode).
func Elicit(ctx context.Context, b *ask.Broker, svc *agent.Service, r manager.ElicitRequest) manager.ElicitResult {
	q := ask.Question{Kind: ask.KindElicitation, SessionID: r.SessionID, Body: r}
	if svc != nil && r.SessionID != "" {
		// A subagent's call's question is its parent session's too.
		q.Ancestors = svc.ParentOf(r.SessionID).Sessions()
	}
	q, ans := b.Ask(ctx, q, ElicitPolicy(r))
	if svc != nil && r.SessionID != "" {
		svc.RecordElicitation(r.SessionID, q.ID, r.Server, r.Mode, r.Message, ans.Choice, ans.Reason)
	}
	return manager.ElicitResult{Action: ans.Choice, Content: ans.Content}
}

// ElicitPolicy is the rule for an MCP server's question, whichever front
// end asks it: accept (with content that fits the form, as ask.Check
// keeps it), decline or cancel, nothing partial passed on; a question
// nobody answered is cancelled.
func ElicitPolicy(r manager.ElicitRequest) ask.Policy { return formPolicy(r.Fields, r.Mode == "form") }

// formPolicy is the rule of every question to the person: accept (with
// content that fits fields, as ask.Check keeps it, when the question is a
// form; a URL elicitation's accept carries nothing), decline or cancel,
// nothing partial passed on; a question nobody answered is cancelled.
func formPolicy(fields []ask.Field, form bool) ask.Policy {
	return ask.Policy{Refusal: actionCancel, Check: func(a ask.Answer) (ask.Answer, error) {
		switch a.Choice {
		case actionAccept:
			if !form {
				return ask.Answer{Choice: actionAccept}, nil
			}
			content, err := ask.Check(fields, a.Content)
			if err != nil {
				return a, fmt.Errorf("%w: %w", errInvalidAnswer, err)
			}
			return ask.Answer{Choice: actionAccept, Content: content}, nil
		case actionDecline, actionCancel:
			return ask.Answer{Choice: a.Choice}, nil // nothing partial is ever passed on
		}
		return a, fmt.Errorf("%w: action must be accept, decline or cancel", errInvalidAnswer)
	}}
}

func elicitationRequest(id string, r manager.ElicitRequest) ElicitationRequest {
	out := ElicitationRequest{RequestID: id, SessionID: r.SessionID, TurnID: r.TurnID, CallID: r.CallID, Server: r.Server,
		Mode: r.Mode, Purpose: r.Purpose, Message: r.Message, URL: r.URL}
	for _, f := range r.Fields {
		out.Fields = append(out.Fields, elicitationField(f))
	}
	return out
}

func elicitationField(f ask.Field) ElicitationField {
	out := ElicitationField{Name: f.Name, Title: f.Title, Description: f.Description, Type: string(f.Type),
		Required: f.Required, Default: f.Default, Format: f.Format, Pattern: editorPattern(f), Minimum: f.Minimum, Maximum: f.Maximum,
		MinLength: f.MinLength, MaxLength: f.MaxLength, MinItems: f.MinItems, MaxItems: f.MaxItems}
	titled := false
	for _, c := range f.Choices {
		out.Enum = append(out.Enum, c.Value)
		titled = titled || c.Title != ""
	}
	if titled {
		for _, c := range f.Choices {
			title := c.Title
			if title == "" {
				title = c.Value
			}
			out.EnumNames = append(out.EnumNames, title)
		}
	}
	return out
}

// answerErrorData is the data of the -32602 an accept that does not fit its
// form gets: every field that does not, and why, so that the editor asks
// again for those only (nil for any other error).
func answerErrorData(err error) *ElicitationAnswerError {
	var fe ask.FieldErrors
	if !errors.As(err, &fe) {
		return nil
	}
	out := &ElicitationAnswerError{Fields: make([]ElicitationFieldError, len(fe))}
	for i, f := range fe {
		out.Fields[i] = ElicitationFieldError{Name: f.Field, Message: f.Message}
	}
	return out
}

// editorPattern is the pattern the editor checks as the person types:
// none when only kin may check it (ask.Field.PatternKinOnly), which it
// does when the answer comes.
func editorPattern(f ask.Field) string {
	if f.PatternKinOnly {
		return ""
	}
	return f.Pattern
}
