package builtin

// Internals the external tests check directly.
var (
	BashGrant = bashGrant
)
