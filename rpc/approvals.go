package rpc

import (
	"context"
	"encoding/json"
)

func handleApprovalRespond(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p ApprovalRespondParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RequestID == "" || p.Decision == "" {
		return nil, invalid("invalid params: requestId and decision are required")
	}
	_, gate := s.service()
	if err := gate.Respond(p.RequestID, p.Decision, p.Permanent); err != nil {
		return nil, err
	}
	return Empty{}, nil
}
