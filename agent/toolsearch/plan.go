package toolsearch

import (
	"fmt"
	"strings"
	"sync"

	"github.com/kin-dev/kin/agent/tool"
)

// Found are the deferred tools a session's model found (by search_tools,
// or by calling a listed name): offered in full from the next request on,
// for the rest of the session in this process. A tool is known by its
// exposed name; its definition is always the server's current one (a
// redefined tool is checked by its own rules when called). The zero value
// is ready; safe for concurrent use.
type Found struct {
	mu     sync.Mutex
	names  map[string]bool
	seeded bool
}

// Seed adds, the first time it is called (since Reset), the names recall
// returns: the tools a resumed conversation called already, so that after
// kin restarts a tool the conversation used is described again without a
// search.
func (f *Found) Seed(recall func() []string) {
	f.mu.Lock()
	seeded := f.seeded
	f.seeded = true
	f.mu.Unlock()
	if !seeded {
		f.Add(recall()...)
	}
}

// Reset forgets every tool found: the next Seed recalls them again from
// the conversation (a rollback took turns out, and with them the searches
// and calls that found tools; what remains is what a restarted kin would
// know).
func (f *Found) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names, f.seeded = nil, false
}

// Add marks names as found.
func (f *Found) Add(names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.names == nil {
		f.names = map[string]bool{}
	}
	for _, n := range names {
		f.names[n] = true
	}
}

// Has reports whether name was found.
func (f *Found) Has(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.names[name]
}

// Offer is what one request offers the model.
type Offer struct {
	// Specs are the definitions sent: every tool but the deferred ones,
	// then search_tools when anything is deferred.
	Specs []tool.Spec
	// Search is the search_tools tool (nil when nothing is deferred): the
	// turn must find it by name when the model calls it.
	Search tool.Tool
	// Deferred are the exposed names left out, in the tools' order.
	Deferred []string
	// Note is the line of the instructions that names them ("" when none).
	Note string
}

// Plan decides what a request offers of tools (those the mode offers, in
// the order they are offered): when the deferrable tools are over th, those
// not found yet are left out and search_tools is offered instead.
func Plan(tools []tool.Tool, th Threshold, found *Found) Offer {
	var o Offer
	n, size := 0, 0
	specs := make([]tool.Spec, len(tools))
	for i, t := range tools {
		specs[i] = t.Spec()
		if tool.Deferrable(t) {
			n++
			size += Size(specs[i])
		}
	}
	if n == 0 || !th.exceeded(n, size) {
		o.Specs = specs
		return o
	}
	var pool []tool.Tool
	for i, t := range tools {
		if !tool.Deferrable(t) {
			o.Specs = append(o.Specs, specs[i])
			continue
		}
		pool = append(pool, t)
		if found.Has(specs[i].Name) {
			o.Specs = append(o.Specs, specs[i])
			continue
		}
		o.Deferred = append(o.Deferred, specs[i].Name)
	}
	if len(o.Deferred) == 0 {
		return o // every one found: nothing to search for
	}
	s := &searchTool{pool: pool, found: found}
	o.Search = s
	o.Specs = append(o.Specs, s.Spec())
	o.Note = note(o.Deferred)
	return o
}

// note names the deferred tools, in one line, and says how to get one.
func note(deferred []string) string {
	tools := "tools are"
	if len(deferred) == 1 {
		tools = "tool is"
	}
	return fmt.Sprintf("\n\n# MCP tools found by search\n"+
		"To keep requests short, %d MCP %s not described here; call %s with what you need (words of its name or purpose), and the tools it finds are offered in full from your next request on. Not yet described: %s\n",
		len(deferred), tools, Name, strings.Join(deferred, ", "))
}
