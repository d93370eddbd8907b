package rpc

import (
	"context"
	"encoding/json"

	"github.com/kin-dev/kin/agent/spend"
)

// The route is added here, beside its handler, so the spend limits touch
// routes.go nowhere.
func init() {
	routes[MethodUsageSummary] = route{handle: handleUsageSummary, cancellable: true}
}

func handleUsageSummary(_ context.Context, s *Server, params json.RawMessage) (any, error) {
	var p UsageSummaryParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Scope != spend.ScopeSession && p.Scope != spend.ScopeDay {
		return nil, invalid("invalid params: scope must be \"session\" or \"day\"")
	}
	if p.Scope == spend.ScopeSession && p.SessionID == "" {
		return nil, invalid("invalid params: sessionId is required for the scope session")
	}
	svc, _ := s.service()
	sum, err := svc.UsageSummary(p.SessionID, p.Scope)
	if err != nil {
		return nil, err
	}
	t := sum.Tally
	out := UsageSummaryResult{Scope: sum.Scope, SessionID: sum.SessionID, Date: sum.Date, InputTokens: t.InputTokens,
		CachedInputTokens: t.CachedInputTokens, OutputTokens: t.OutputTokens, TotalTokens: t.Tokens(),
		Currency: sum.Currency, Estimated: t.Estimated, Unpriced: t.Unpriced, Limits: []LimitUsed{}}
	if sum.Currency != "" {
		out.Cost = &t.Cost
	}
	for _, l := range sum.Limits {
		out.Limits = append(out.Limits, LimitUsed{Name: l.Name, Limit: l.Max, Used: l.Used})
	}
	return out, nil
}
