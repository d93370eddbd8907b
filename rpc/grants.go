package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/permission"
)

type grantsListResult struct {
	Grants []permission.Grant `json:"grants"`
}

func handleGrantsList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	_, gate := s.service()
	out := gate.Grants().List()
	s.mu.Lock()
	mcp := s.mcp
	s.mu.Unlock()
	if mcp != nil {
		out = append(out, mcp.TrustGrants()...)
	}
	if out == nil {
		out = []permission.Grant{}
	}
	return grantsListResult{Grants: out}, nil
}

type grantIDParams struct {
	ID string `json:"id"`
}

func handleGrantsRevoke(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p grantIDParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, invalid("invalid params: id is required")
	}
	if name, ok := strings.CutPrefix(p.ID, "trust:"); ok {
		mcp, err := s.mcpManager()
		if err != nil {
			return nil, err
		}
		found, err := mcp.RevokeTrust(name)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("%w: no trust grant for server %q", errNotFound, name)
		}
		return Empty{}, nil
	}
	_, gate := s.service()
	found, err := gate.Grants().Revoke(p.ID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: no grant %q", errNotFound, p.ID)
	}
	return Empty{}, nil
}
