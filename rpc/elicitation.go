package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
)

// ElicitationField is one question of a form.
type ElicitationField struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"` // string, number, integer, boolean, enum
	Required    bool     `json:"required,omitempty"`
	Default     any      `json:"default,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	EnumNames   []string `json:"enumNames,omitempty"`
	Format      string   `json:"format,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
}

// ElicitationRequest is elicitation/request's params.
type ElicitationRequest struct {
	RequestID string             `json:"requestId"`
	SessionID string             `json:"sessionId,omitempty"`
	Server    string             `json:"server"`
	Mode      string             `json:"mode"` // form or url
	Purpose   string             `json:"purpose,omitempty"`
	Message   string             `json:"message"`
	Fields    []ElicitationField `json:"fields,omitempty"`
	URL       string             `json:"url,omitempty"`
}

// ElicitationResponse is what the person answered.
type ElicitationResponse struct {
	Action  string         `json:"action"` // accept, decline, cancel
	Content map[string]any `json:"content,omitempty"`
}

// ElicitationResolved is elicitation/resolved's params.
type ElicitationResolved struct {
	RequestID string `json:"requestId"`
	Action    string `json:"action"`
	Reason    string `json:"reason"`
}

type elicitationRespondParams struct {
	RequestID string         `json:"requestId"`
	Action    string         `json:"action"`
	Content   map[string]any `json:"content,omitempty"`
}

type pendingElicitation struct {
	req   ElicitationRequest
	reply chan ElicitationResponse
}

// elicitations relays MCP servers' questions to the editor and waits for
// the answer. Like approvals, anything not answered is a decline.
type elicitations struct {
	s   *Server
	seq atomic.Uint64

	// mu guards pend.
	mu   sync.Mutex
	pend map[string]*pendingElicitation
}

func newElicitations(s *Server) *elicitations {
	return &elicitations{s: s, pend: map[string]*pendingElicitation{}}
}

// Ask sends the request and waits for the person, ctx, or teardown.
func (e *elicitations) Ask(ctx context.Context, req ElicitationRequest) ElicitationResponse {
	req.RequestID = fmt.Sprintf("el_%d", e.seq.Add(1))
	p := &pendingElicitation{req: req, reply: make(chan ElicitationResponse, 1)}
	e.mu.Lock()
	e.pend[req.RequestID] = p
	e.mu.Unlock()
	e.s.notify(NotifyElicitationRequest, req)
	var resp ElicitationResponse
	reason := "person"
	select {
	case resp = <-p.reply:
		if resp.Action == "" {
			reason = "disconnected"
			resp.Action = "cancel"
		}
	case <-ctx.Done():
		resp, reason = ElicitationResponse{Action: "cancel"}, "cancelled"
	}
	e.mu.Lock()
	delete(e.pend, req.RequestID)
	e.mu.Unlock()
	e.s.notify(NotifyElicitationResolved, ElicitationResolved{RequestID: req.RequestID, Action: resp.Action, Reason: reason})
	if svc, _ := e.s.service(); svc != nil && req.SessionID != "" {
		svc.RecordElicitation(req.SessionID, req.RequestID, req.Server, req.Mode, req.Message, resp.Action, reason)
	}
	return resp
}

func (e *elicitations) respond(p elicitationRespondParams) error {
	e.mu.Lock()
	pe, ok := e.pend[p.RequestID]
	e.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: no pending elicitation %q", errNotFound, p.RequestID)
	}
	switch p.Action {
	case "accept":
		if pe.req.Mode == "form" {
			if err := checkContent(pe.req.Fields, p.Content); err != nil {
				return invalid("invalid params: %v", err)
			}
		}
	case "decline", "cancel":
		p.Content = nil // nothing partial is ever passed on
	default:
		return invalid("invalid params: action must be accept, decline or cancel")
	}
	select {
	case pe.reply <- ElicitationResponse{Action: p.Action, Content: p.Content}:
	default:
	}
	return nil
}

func (e *elicitations) pending(sessionID string) []ElicitationRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []ElicitationRequest
	for _, p := range e.pend {
		if p.req.SessionID == "" || p.req.SessionID == sessionID {
			out = append(out, p.req)
		}
	}
	return out
}

func (e *elicitations) cancelAll(reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, p := range e.pend {
		select {
		case p.reply <- ElicitationResponse{}:
		default:
		}
	}
}

// checkContent checks an accepted form against its fields: required ones
// present, types right, enum values among the choices, no extra keys.
func checkContent(fields []ElicitationField, content map[string]any) error {
	known := map[string]ElicitationField{}
	for _, f := range fields {
		known[f.Name] = f
		if _, ok := content[f.Name]; f.Required && !ok {
			return fmt.Errorf("field %q is required", f.Name)
		}
	}
	for k, v := range content {
		f, ok := known[k]
		if !ok {
			return fmt.Errorf("unknown field %q", k)
		}
		switch f.Type {
		case "string":
			if _, ok := v.(string); !ok {
				return fmt.Errorf("field %q must be a string", k)
			}
		case "number", "integer":
			n, ok := v.(float64)
			if !ok {
				return fmt.Errorf("field %q must be a number", k)
			}
			if f.Type == "integer" && n != float64(int64(n)) {
				return fmt.Errorf("field %q must be a whole number", k)
			}
			if (f.Minimum != nil && n < *f.Minimum) || (f.Maximum != nil && n > *f.Maximum) {
				return fmt.Errorf("field %q is out of range", k)
			}
		case "boolean":
			if _, ok := v.(bool); !ok {
				return fmt.Errorf("field %q must be true or false", k)
			}
		case "enum":
			s, _ := v.(string)
			found := false
			for _, e := range f.Enum {
				found = found || e == s
			}
			if !found {
				return fmt.Errorf("field %q must be one of the choices", k)
			}
		}
	}
	return nil
}

func handleElicitationRespond(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p elicitationRespondParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RequestID == "" {
		return nil, invalid("invalid params: requestId is required")
	}
	if err := s.elicit.respond(p); err != nil {
		return nil, err
	}
	return Empty{}, nil
}
