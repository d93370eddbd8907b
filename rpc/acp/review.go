package acp

import (
	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/agent/review"
)

// Finding implements agent.FindingEvents: ACP has no place for a review's
// findings, so each arrives as the agent's text, on its own lines
// ("error calc.go:6  title" and its body), before the turn ends.
func (e events) Finding(v agent.Finding) {
	e.s.update(v.SessionID, ContentChunk{SessionUpdate: UpdateAgentMessage, Content: TextBlock("\n\nFinding: " + review.Text(v.Root, v.Finding) + "\n\n")})
}

var _ agent.FindingEvents = events{}
