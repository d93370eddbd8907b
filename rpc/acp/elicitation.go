package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/mcp/manager"
	"github.com/kin-dev/kin/rpc"
)

// elicit puts an MCP server's question to the person through the broker,
// under kin serve's rule (rpc.Elicit), when the client takes that
// mode (elicitation.form or .url); otherwise it is declined. Either way
// the outcome (never the answer) is recorded in the session.
func (s *Server) elicit(ctx context.Context, r manager.ElicitRequest) manager.ElicitResult {
	caps := s.clientCaps()
	takes := caps.Elicitation != nil && ((r.Mode == "form" && caps.Elicitation.Form != nil) || (r.Mode == "url" && caps.Elicitation.URL != nil))
	svc, _ := s.service()
	if !takes || r.SessionID == "" {
		reason := "the editor does not take " + r.Mode + " questions"
		if r.SessionID == "" {
			reason = "no session to ask in"
		}
		id := fmt.Sprintf("el_declined_%d", s.seq.Add(1))
		s.log.Info("elicitation declined", zap.String("server", r.Server), zap.String("mode", r.Mode), zap.String("reason", reason))
		if svc != nil && r.SessionID != "" {
			svc.RecordElicitation(r.SessionID, id, r.Server, r.Mode, r.Message, "decline", reason)
		}
		return manager.ElicitResult{Action: "decline"}
	}
	return rpc.Elicit(ctx, s.broker(), svc, r)
}

// askElicitation sends elicitation/create and gives the broker the answer;
// one that does not fit the form is a decline.
func (s *Server) askElicitation(ctx context.Context, id string, r manager.ElicitRequest) {
	p := CreateElicitationRequest{SessionID: r.SessionID, ToolCallID: r.CallID, Mode: r.Mode, Message: r.Server + " asks: " + r.Message}
	switch r.Mode {
	case "form":
		p.RequestedSchema = formSchema(r.Fields)
	case "url":
		p.URL, p.ElicitationID = r.URL, id
		if r.ElicitationID != "" {
			s.urls.add(r.Server, r.ElicitationID, id)
		}
	}
	s.elicitationCreate(ctx, id, p)
}

// maxURLElicits bounds the URL-mode elicitations kept for their completion
// (a server that never says one finished must not grow the table).
const maxURLElicits = 64

// urlElicits maps a server's elicitationId to the id kin gave the client
// (its own question id: a server's ids cannot collide with another's).
type urlElicits struct {
	// mu guards ids and order.
	mu    sync.Mutex
	ids   map[string]string
	order []string
}

func (u *urlElicits) add(server, serverID, kinID string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ids == nil {
		u.ids = map[string]string{}
	}
	key := server + "\x00" + serverID
	if _, ok := u.ids[key]; !ok {
		u.order = append(u.order, key)
	}
	u.ids[key] = kinID
	for len(u.order) > maxURLElicits {
		delete(u.ids, u.order[0])
		u.order = u.order[1:]
	}
}

// take returns and forgets the client's id for a server's elicitation.
func (u *urlElicits) take(server, serverID string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	key := server + "\x00" + serverID
	id, ok := u.ids[key]
	if ok {
		delete(u.ids, key)
		u.order = slices.DeleteFunc(u.order, func(k string) bool { return k == key })
	}
	return id, ok
}

// ElicitComplete implements rpc.MCPElicitCompleter: a server says a URL it
// sent the person to is done with (the person signed in, say), so the
// client can stop showing the link: ACP's elicitation/complete, naming the
// elicitation as kin sent it. One kin never asked about is ignored.
func (f front) ElicitComplete(server, elicitationID string) {
	id, ok := f.s.urls.take(server, elicitationID)
	if !ok {
		f.s.log.Debug("an elicitation completion kin did not ask for", zap.String("server", server))
		return
	}
	f.s.log.Info("elicitation completed", zap.String("server", server), zap.String("request", id))
	f.s.notify(NotifyElicitationDone, CompleteElicitationNotification{ElicitationID: id})
}

var _ rpc.MCPElicitCompleter = front{}

// elicitationCreate asks the client and gives the broker its answer; an
// answer that does not fit the form is a decline, a failed request a
// cancel.
func (s *Server) elicitationCreate(ctx context.Context, id string, p CreateElicitationRequest) {
	var resp CreateElicitationResponse
	err := s.call(ctx, "elicit", MethodElicitationCreate, p, &resp)
	b := s.broker()
	switch {
	case errors.Is(err, context.Canceled):
		return
	case err != nil:
		s.log.Warn("elicitation/create failed; cancelled", zap.String("request", id), zap.Error(err))
		_ = b.Respond(ask.KindElicitation, id, ask.Answer{Choice: "cancel"})
		return
	}
	if err := b.Respond(ask.KindElicitation, id, ask.Answer{Choice: resp.Action, Content: resp.Content}); err != nil && !errors.Is(err, ask.ErrUnknown) {
		s.log.Warn("the client's answer does not fit the question; declined", zap.String("request", id), zap.Error(err))
		_ = b.Respond(ask.KindElicitation, id, ask.Answer{Choice: "decline"})
	}
}

// kinAsker puts the questions of kin's own ask tool to the person as
// elicitation/create forms, through the connection's broker as an MCP
// server's are, with kin serve's form and answer check. A client that did
// not advertise forms (clientCapabilities.elicitation.form) cannot answer:
// the question is declined at once as headless and nothing is sent; the
// agent records it either way.
type kinAsker struct {
	s      *Server
	broker *ask.Broker
}

func (k kinAsker) AskPerson(ctx context.Context, q agent.Question) agent.Reply {
	if caps := k.s.clientCaps(); caps.Elicitation == nil || caps.Elicitation.Form == nil {
		k.s.log.Info("kin's question declined: the client takes no forms", zap.String("session", q.SessionID))
		return agent.Reply{Action: agent.ActionDecline, Reason: agent.ReasonHeadless}
	}
	return rpc.AskQuestion(ctx, k.broker, q)
}

// askQuestion sends kin's question as a form in its session, tied to the
// ask tool's call; _meta.kin.source says it is kin's, not a server's.
func (s *Server) askQuestion(ctx context.Context, id string, q agent.Question) {
	s.elicitationCreate(ctx, id, CreateElicitationRequest{SessionID: q.SessionID, ToolCallID: q.CallID, Mode: "form", Message: q.Message,
		RequestedSchema: formSchema(rpc.QuestionFields(q)), Meta: Meta{"kin": map[string]any{"source": rpc.SourceKin, "requestId": id}}})
}

// formSchema is ACP's restricted JSON Schema for a form's fields.
func formSchema(fields []ask.Field) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range fields {
		p := map[string]any{}
		if f.Title != "" {
			p["title"] = f.Title
		}
		if f.Description != "" {
			p["description"] = f.Description
		}
		if f.Default != nil {
			p["default"] = f.Default
		}
		titled := false
		for _, c := range f.Choices {
			titled = titled || c.Title != ""
		}
		choices := func() any {
			if !titled {
				var vals []string
				for _, c := range f.Choices {
					vals = append(vals, c.Value)
				}
				return vals
			}
			var one []map[string]string
			for _, c := range f.Choices {
				t := c.Title
				if t == "" {
					t = c.Value
				}
				one = append(one, map[string]string{"const": c.Value, "title": t})
			}
			return one
		}
		switch f.Type {
		case ask.TypeEnum:
			p["type"] = "string"
			if titled {
				p["oneOf"] = choices()
			} else {
				p["enum"] = choices()
			}
		case ask.TypeMultiSelect:
			p["type"] = "array"
			if titled {
				p["items"] = map[string]any{"anyOf": choices()}
			} else {
				p["items"] = map[string]any{"type": "string", "enum": choices()}
			}
			if f.MinItems != nil {
				p["minItems"] = *f.MinItems
			}
			if f.MaxItems != nil {
				p["maxItems"] = *f.MaxItems
			}
		default:
			p["type"] = string(f.Type)
			if f.Format != "" {
				p["format"] = f.Format
			}
			if f.MinLength != nil {
				p["minLength"] = *f.MinLength
			}
			if f.MaxLength != nil {
				p["maxLength"] = *f.MaxLength
			}
			if f.Minimum != nil {
				p["minimum"] = *f.Minimum
			}
			if f.Maximum != nil {
				p["maximum"] = *f.Maximum
			}
		}
		props[f.Name] = p
		if f.Required {
			required = append(required, f.Name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}
