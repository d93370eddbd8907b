package builtin

// Internals the external tests check directly.
var (
	UnifiedDiff = unifiedDiff
	BashGrant   = bashGrant
)
