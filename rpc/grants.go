package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent/permission"
)

func handleGrantsList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	_, gate := s.service()
	return grantsList(gate, s.mcpServers()), nil
}

// grantsList is every standing grant: the gate's, then the servers' trust.
func grantsList(gate *permission.Gate, servers []*MCPServers) GrantsListResult {
	out := GrantsListResult{Grants: []Grant{}}
	for _, g := range gate.Grants().List() {
		out.Grants = append(out.Grants, grant(g))
	}
	for _, m := range servers {
		out.Grants = append(out.Grants, m.trustGrants()...)
	}
	return out
}

func grant(g permission.Grant) Grant {
	return Grant{ID: g.ID, Type: g.Type, Key: g.Key, Fingerprint: g.Fingerprint, Label: g.Label, Scope: g.Scope,
		SessionID: g.SessionID, Created: g.Created}
}

func handleGrantsRevoke(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p GrantIDParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, invalid("invalid params: id is required")
	}
	if name, ok := strings.CutPrefix(p.ID, "trust:"); ok {
		mcp, err := s.mcpService()
		if err != nil {
			return nil, err
		}
		found, err := mcp.revokeTrust(name)
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
