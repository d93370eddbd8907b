package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent/ask"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
)

func handleApprovalRespond(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p ApprovalRespondParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.RequestID == "" || p.Decision == "" {
		return nil, invalid("invalid params: requestId and decision are required")
	}
	decision := p.Decision
	if p.Permanent && decision == permission.AllowAlways {
		// The first release's spelling of the permanent choice
		// (PROTOCOL.md: accepted for one more release).
		decision = permission.AllowAlwaysPermanent
	}
	_, gate := s.service()
	if err := gate.Answer(p.RequestID, p.Revision, decision); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

// approvalRequest is the approval/request of a question (each revision of
// it: the same requestId, the next revision).
func approvalRequest(q ask.Question, r permission.Request) ApprovalRequest {
	out := ApprovalRequest{RequestID: q.ID, Revision: q.Revision, SessionID: r.SessionID, TurnID: r.TurnID, CallID: r.CallID, Kind: r.Kind,
		Tool: r.ToolName, ToolKind: string(r.ToolKind), ApprovalDetails: approvalDetails(r.Approval),
		Transport: r.Transport, Scope: r.Scope, ReadOnlyTools: r.ReadOnlyTools, Items: trustItems(r.Items), Options: []PermissionOption{}, Nesting: nesting(r.Parent)}
	for _, o := range r.Options {
		out.Options = append(out.Options, PermissionOption{OptionID: o.OptionID, Name: o.Name, Kind: o.Kind})
	}
	return out
}

func approvalDetails(a tool.Approval) ApprovalDetails {
	d := ApprovalDetails{Title: a.Title, Command: a.Command, Cwd: a.Cwd, UnsavedFiles: a.UnsavedFiles, Server: a.Server, Destination: a.Destination,
		ServerTool: a.Tool, Arguments: a.Arguments, Warning: a.Warning, AlwaysAsk: a.AlwaysAsk}
	for _, x := range a.Diffs {
		d.Diffs = append(d.Diffs, diff(x))
	}
	if a.Grant != nil {
		d.Grant = &GrantScope{Key: a.Grant.Key, Fingerprint: a.Grant.Fingerprint, Label: a.Grant.Label}
	}
	d.Sandbox = sandboxUse(a.Sandbox)
	return d
}

func sandboxUse(s *tool.Sandbox) *SandboxUse {
	if s == nil {
		return nil
	}
	return &SandboxUse{Confined: s.Confined, Network: s.Network, Writable: s.Writable}
}
