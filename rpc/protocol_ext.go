package rpc

import "time"

// PROTOCOL.md, Skills, hooks and trust: skills/list, trust/list,
// trust/revoke, and approval/request's project_trust and mcp_skill kinds.

// Methods of skills and the trust ledger.
const (
	MethodSkillsList  = "skills/list"
	MethodTrustList   = "trust/list"
	MethodTrustRevoke = "trust/revoke"
)

// Approval kinds of skills and the ledger.
const (
	KindProjectTrust = "project_trust"
	KindMCPSkill     = "mcp_skill"
)

// TrustItem is one thing a project_trust or mcp_skill request asks about.
type TrustItem struct {
	// Kind is skill, hook, instructions or mcp_skill.
	Kind string `json:"kind"`
	// Path is where it is (relative to the first workspace folder when
	// inside it; a hook's file and its place; an MCP skill's URI).
	Path   string `json:"path"`
	Name   string `json:"name,omitempty"`
	Digest string `json:"digest"`
	// Detail is a hook's command line, a skill's description, an
	// instruction file's size.
	Detail string `json:"detail,omitempty"`
	// Changed: trusted before with other content.
	Changed bool `json:"changed,omitempty"`
}

// SkillsListParams is skills/list's params.
type SkillsListParams struct {
	// SessionID picks the session whose folders' skills are listed
	// (absent: the connection's workspace folders).
	SessionID string `json:"sessionId,omitempty"`
}

// SkillInfo is one skill.
type SkillInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Source is kin ($KIN_HOME/skills), agents (~/.agents/skills),
	// project:.agents/skills, project:.claude/skills or mcp:<server>.
	Source string `json:"source"`
	// Path is the skill's folder, or (MCP) its SKILL.md's URI.
	Path string `json:"path"`
	// Trusted: the person's own, or trusted with its current content.
	Trusted      bool     `json:"trusted"`
	AllowedTools []string `json:"allowedTools,omitempty"`
	// Shadows are the folders of same-named skills this one wins over.
	Shadows []string `json:"shadows,omitempty"`
}

// SkillsListResult is skills/list's result.
type SkillsListResult struct {
	Skills []SkillInfo `json:"skills"`
}

// TrustEntry is one thing the person trusted.
type TrustEntry struct {
	// ID is what trust/revoke takes.
	ID string `json:"id"`
	// Kind is mcp_launch, skill, hook, instructions or mcp_skill.
	Kind    string `json:"kind"`
	Project string `json:"project,omitempty"`
	Path    string `json:"path,omitempty"`
	Name    string `json:"name,omitempty"`
	Digest  string `json:"digest"`
	// Display is a launch line (masked), a hook's command, a skill's
	// description.
	Display   string    `json:"display,omitempty"`
	TrustedAt time.Time `json:"trustedAt"`
}

// TrustListResult is trust/list's result.
type TrustListResult struct {
	Entries []TrustEntry `json:"entries"`
}

// TrustRevokeParams is trust/revoke's params.
type TrustRevokeParams struct {
	ID string `json:"id"`
}
