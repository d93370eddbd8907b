package agent

import (
	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/agent/toolsearch"
)

// offer is what this request offers the model of tools (see
// agent/toolsearch): the ask mode's read-only ones only, and, when the MCP
// tools are over the toolSearchThreshold, search_tools in place of those
// not found yet. It returns the specs to send and the tools a call may
// name (search_tools added), and sets the instructions' line naming the
// deferred tools.
func (t *turn) offer(tools []tool.Tool) ([]tool.Spec, []tool.Tool) {
	mode := t.mode()
	offered := make([]tool.Tool, 0, len(tools))
	for _, tl := range tools {
		if mode == permission.ModeAsk && !tool.ReadOnly(tl) {
			continue // not offered; a forced call is still refused by the gate
		}
		offered = append(offered, tl)
	}
	t.sess.found.Seed(t.sess.calledTools)
	o := toolsearch.Plan(offered, t.svc.toolSearch, &t.sess.found)
	t.toolNote, t.deferred = o.Note, o.Deferred
	if o.Search != nil {
		tools = append(tools, o.Search)
	}
	return o.Specs, tools
}

// calledDeferred marks the deferred tools the model called by their listed
// names, without a search, as found: they run as any call does (the same
// approval and checks), and are described from the next request on.
func (t *turn) calledDeferred(calls []model.Call) {
	if len(t.deferred) == 0 {
		return
	}
	for _, c := range calls {
		for _, d := range t.deferred {
			if c.Name == d {
				t.sess.found.Add(d)
			}
		}
	}
}

// calledTools are the tools the session's conversation (as the model sees
// it) called: a resumed session's deferred tools it used are described
// again without a search.
func (s *Session) calledTools() []string {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.conv == nil {
		return nil
	}
	var out []string
	for _, it := range s.conv.items {
		if it.kind == model.FunctionCall {
			out = append(out, it.name)
		}
	}
	return out
}
