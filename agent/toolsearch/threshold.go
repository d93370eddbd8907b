package toolsearch

import (
	"encoding/json"

	"github.com/kin-dev/kin/agent/settings"
	"github.com/kin-dev/kin/agent/tool"
)

// Threshold is the budget past which MCP tool definitions are deferred.
// A negative field never defers by that measure.
type Threshold struct {
	Tools int // more MCP tools than this
	Bytes int // or more bytes of their definitions than this
}

// Default is the budget when the setting does not say otherwise.
var Default = Threshold{Tools: 40, Bytes: 20000}

// FromSettings reads the toolSearchThreshold setting (an absent field is
// the default's).
func FromSettings(s *settings.ToolSearchThreshold) Threshold {
	th := Default
	if s == nil {
		return th
	}
	if s.Tools != nil {
		th.Tools = *s.Tools
	}
	if s.Bytes != nil {
		th.Bytes = *s.Bytes
	}
	return th
}

// exceeded reports whether n definitions of size bytes are over the budget.
func (th Threshold) exceeded(n, size int) bool {
	return (th.Tools >= 0 && n > th.Tools) || (th.Bytes >= 0 && size > th.Bytes)
}

// Size is the bytes a spec takes in a request (its JSON).
func Size(s tool.Spec) int {
	b, _ := json.Marshal(s)
	return len(b)
}
