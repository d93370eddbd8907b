package tool

// ReadOnlyTool is implemented by tools that know, before any call, whether
// they change nothing (an MCP tool its approved server declared read-only
// in its initial list; kin's plan and ask tools).
type ReadOnlyTool interface {
	ReadOnly() bool
}

// ReadOnly reports whether calls of t change nothing: what the ask mode
// offers the model. A tool says so itself (ReadOnlyTool), else its kind
// does: only read tools change nothing.
func ReadOnly(t Tool) bool {
	if r, ok := t.(ReadOnlyTool); ok {
		return r.ReadOnly()
	}
	return t.Spec().Kind == KindRead
}
