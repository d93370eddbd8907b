package rpc

// PROTOCOL.md, Spend limits: usage/summary, and the approval kind limit.

// MethodUsageSummary reports what a session, or today, used.
const MethodUsageSummary = "usage/summary"

// KindLimit is the approval/request kind asked before a model request
// that would pass a spend limit: allow_once continues this turn,
// allow_always raises the limit for this session, deny stops.
const KindLimit = "limit"

// UsageSummaryParams is usage/summary's params: scope session (sessionId
// required) or day (sessionId optional: its raised limits show).
type UsageSummaryParams struct {
	Scope     string `json:"scope"`
	SessionID string `json:"sessionId,omitempty"`
}

// UsageSummaryResult is what the scope used: tokens (input includes
// cached input), the cost in currency (absent when no model has a price),
// and the limits over the scope with what is used of each.
type UsageSummaryResult struct {
	Scope             string      `json:"scope"`
	SessionID         string      `json:"sessionId,omitempty"`
	Date              string      `json:"date,omitempty"`
	InputTokens       int64       `json:"inputTokens"`
	CachedInputTokens int64       `json:"cachedInputTokens"`
	OutputTokens      int64       `json:"outputTokens"`
	TotalTokens       int64       `json:"totalTokens"`
	Cost              *float64    `json:"cost,omitempty"`
	Currency          string      `json:"currency,omitempty"`
	Estimated         bool        `json:"estimated,omitempty"`
	Unpriced          bool        `json:"unpriced,omitempty"`
	Limits            []LimitUsed `json:"limits"`
}

// LimitUsed is one limit over a scope: its name in settings.json, its
// maximum (as raised for the session) and what is used of it.
type LimitUsed struct {
	Name  string  `json:"name"`
	Limit float64 `json:"limit"`
	Used  float64 `json:"used"`
}
