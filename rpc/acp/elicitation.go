package acp

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/kin-dev/kin/rpc"
)

// elicit carries an MCP server's question to the client as
// elicitation/create when the client takes that mode (form or url); else
// it is declined, and recorded in the session either way (never the
// answer itself). Anything but an accept passes nothing on.
func (s *Server) elicit(ctx context.Context, req rpc.ElicitationRequest) rpc.ElicitationResponse {
	req.RequestID = fmt.Sprintf("el_%d", s.seq.Add(1))
	resp, reason := s.elicitClient(ctx, req)
	if resp.Action != "accept" {
		resp.Content = nil
	}
	s.log.Info("elicitation", zap.String("request", req.RequestID), zap.String("server", req.Server), zap.String("mode", req.Mode),
		zap.String("action", resp.Action), zap.String("reason", reason))
	if svc, _ := s.service(); svc != nil && req.SessionID != "" {
		svc.RecordElicitation(req.SessionID, req.RequestID, req.Server, req.Mode, req.Message, resp.Action, reason)
	}
	return resp
}

func (s *Server) elicitClient(ctx context.Context, req rpc.ElicitationRequest) (rpc.ElicitationResponse, string) {
	caps := s.clientCaps()
	takes := caps.Elicitation != nil && ((req.Mode == "form" && caps.Elicitation.Form != nil) || (req.Mode == "url" && caps.Elicitation.URL != nil))
	if !takes || req.SessionID == "" {
		return rpc.ElicitationResponse{Action: "decline"}, "the editor does not take " + req.Mode + " questions"
	}
	p := CreateElicitationRequest{SessionID: req.SessionID, Mode: req.Mode, Message: fmt.Sprintf("%s asks: %s", req.Server, req.Message)}
	switch req.Mode {
	case "form":
		p.RequestedSchema = formSchema(req.Fields)
	case "url":
		p.URL, p.ElicitationID = req.URL, req.RequestID
	}
	var resp CreateElicitationResponse
	if err := s.call(ctx, "elicit", MethodElicitationCreate, p, &resp); err != nil {
		if ctx.Err() != nil {
			return rpc.ElicitationResponse{Action: "cancel"}, "cancelled"
		}
		return rpc.ElicitationResponse{Action: "cancel"}, "the editor failed: " + err.Error()
	}
	switch resp.Action {
	case "accept", "decline", "cancel":
	default:
		return rpc.ElicitationResponse{Action: "decline"}, fmt.Sprintf("the editor answered %q", resp.Action)
	}
	return rpc.ElicitationResponse{Action: resp.Action, Content: resp.Content}, "person"
}

// formSchema is ACP's restricted JSON Schema for a form's fields.
func formSchema(fields []rpc.ElicitationField) map[string]any {
	props := map[string]any{}
	var required []string
	for _, f := range fields {
		p := map[string]any{}
		if f.Title != "" {
			p["title"] = f.Title
		}
		if f.Description != "" {
			p["description"] = f.Description
		}
		switch f.Type {
		case "enum":
			p["type"] = "string"
			if len(f.EnumNames) == len(f.Enum) && len(f.Enum) > 0 {
				var one []map[string]string
				for i, v := range f.Enum {
					one = append(one, map[string]string{"const": v, "title": f.EnumNames[i]})
				}
				p["oneOf"] = one
			} else {
				p["enum"] = f.Enum
			}
		default:
			p["type"] = f.Type
		}
		if f.Default != nil {
			p["default"] = f.Default
		}
		if f.Format != "" {
			p["format"] = f.Format
		}
		if f.Minimum != nil {
			p["minimum"] = *f.Minimum
		}
		if f.Maximum != nil {
			p["maximum"] = *f.Maximum
		}
		if f.MinLength != nil {
			p["minLength"] = *f.MinLength
		}
		if f.MaxLength != nil {
			p["maxLength"] = *f.MaxLength
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
