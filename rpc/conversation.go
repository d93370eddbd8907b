package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/session"
)

// The conversation's methods: models/list and session/compact (model and
// effort of session/configure are in commands.go's handler), and the
// mapping of turn/start's parts.

func handleModelsList(ctx context.Context, s *Server, _ json.RawMessage) (any, error) {
	svc, _ := s.service()
	cat := svc.Models()
	out := ModelsListResult{Models: make([]ModelEntry, 0, len(cat.Models)), Default: cat.Default}
	for _, m := range cat.Models {
		api := m.API
		if api == "" {
			api = "responses"
		}
		e := ModelEntry{ID: m.Model, Name: m.DisplayName(), ContextWindow: m.Window(), Efforts: append([]string{}, m.Efforts...),
			API: api, Images: !m.NoImages, APIKeyEnv: m.KeyVar(), Missing: m.Missing()}
		e.Configured = e.Missing == ""
		out.Models = append(out.Models, e)
	}
	return out, nil
}

func handleSessionCompact(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	id, err := sessionID(params)
	if err != nil {
		return nil, err
	}
	svc, _ := s.service()
	done, err := svc.Compact(ctx, id, s.workspace())
	if err != nil {
		return nil, err
	}
	return SessionCompactResult{Compacted: done}, nil
}

func instructionFiles(fs []session.InstructionFile) []InstructionFile {
	out := make([]InstructionFile, 0, len(fs))
	for _, f := range fs {
		out = append(out, InstructionFile{Path: f.Path, Bytes: f.Bytes, Truncated: f.Cut})
	}
	return out
}

// agentParts are a question's parts for the agent.
func agentParts(ps []InputPart) []agent.Part {
	out := make([]agent.Part, 0, len(ps))
	for _, p := range ps {
		a := agent.Part{Type: p.Type, Text: p.Text, Path: p.Path, URI: p.URI, Server: p.Server, MimeType: p.MimeType, Data: p.Data}
		if p.Range != nil {
			r := agentRange(*p.Range)
			a.Range = &r
		}
		for _, d := range p.Items {
			a.Items = append(a.Items, agent.Diagnostic{Range: agentRange(d.Range), Severity: d.Severity, Message: d.Message, Source: d.Source})
		}
		out = append(out, a)
	}
	return out
}

func agentRange(r Range) agent.Range {
	return agent.Range{Start: agent.Position{Line: r.Start.Line, Character: r.Start.Character},
		End: agent.Position{Line: r.End.Line, Character: r.End.Character}}
}

// inputParts are parts as history and turn/started show them.
func inputParts(ps []agent.Part) []InputPart {
	var out []InputPart
	for _, p := range ps {
		w := InputPart{Type: p.Type, Text: p.Text, Path: p.Path, URI: p.URI, Server: p.Server, MimeType: p.MimeType, Data: p.Data, Bytes: p.Bytes}
		if p.Range != nil {
			r := wireRange(*p.Range)
			w.Range = &r
		}
		for _, d := range p.Items {
			w.Items = append(w.Items, DiagnosticItem{Range: wireRange(d.Range), Severity: d.Severity, Message: d.Message, Source: d.Source})
		}
		out = append(out, w)
	}
	return out
}

func wireRange(r agent.Range) Range {
	return Range{Start: Position{Line: r.Start.Line, Character: r.Start.Character}, End: Position{Line: r.End.Line, Character: r.End.Character}}
}
