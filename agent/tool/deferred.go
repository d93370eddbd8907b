package tool

// DeferrableTool is implemented by tools whose definitions may be left out
// of a request when there are too many (MCP tools: see agent/toolsearch).
// kin's own and the built-in tools never implement it: they are always
// offered in full.
type DeferrableTool interface {
	Deferrable() bool
}

// Deferrable reports whether t's definition may be left out of a request.
func Deferrable(t Tool) bool {
	d, ok := t.(DeferrableTool)
	return ok && d.Deferrable()
}
