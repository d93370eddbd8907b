package calltool

// Deferrable implements tool.DeferrableTool: when the MCP tools together
// are over the toolSearchThreshold, an MCP tool's definition is offered
// only once the model found it with search_tools (agent/toolsearch). Its
// calls are prepared, approved and checked exactly as when it is offered.
func (t *Tool) Deferrable() bool { return true }
