package chat

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kin-dev/kin/rpc"
)

// MCP resources in kin chat (issue 24 §4, §7): @server:uri in a question
// attaches a server's resource (kin reads it from the server), Tab
// completes the resources of the connected servers, /resources lists
// them, /saw shows what the model saw of a call's result, and /open shows
// a resource (a call's link) to the person.

// resourceMentions are the @server:uri words of a question naming a server
// with resources that kin chat has listed, as resource parts. A word that
// is a file is a file mention (mentions), never a resource.
func resourceMentions(text string, servers map[string]bool) []rpc.InputPart {
	var out []rpc.InputPart
	seen := map[string]bool{}
	for _, word := range strings.Fields(text) {
		if len(word) < 2 || word[0] != '@' {
			continue
		}
		ref := strings.TrimRight(word[1:], ",.;!?)]}'\"")
		server, uri, ok := strings.Cut(ref, ":")
		if !ok || !servers[server] || !strings.Contains(uri, "://") || seen[ref] {
			continue
		}
		seen[ref] = true
		out = append(out, rpc.InputPart{Type: "resource", Server: server, URI: uri})
	}
	return out
}

// withResources adds the question's resource mentions to its params.
func withResources(p turnStartParams, text string, servers map[string]bool) turnStartParams {
	return withParts(p, text, resourceMentions(text, servers))
}

// withParts adds resource parts to a question's params (text: the
// question, its first part when it had none), each once.
func withParts(p turnStartParams, text string, parts []rpc.InputPart) turnStartParams {
	if len(parts) == 0 {
		return p
	}
	if len(p.Parts) == 0 {
		p.Parts = []rpc.InputPart{{Type: "text", Text: text}}
		p.Input = ""
	}
next:
	for _, a := range parts {
		for _, q := range p.Parts {
			if q.Type == "resource" && q.Server == a.Server && q.URI == a.URI {
				continue next
			}
		}
		p.Parts = append(p.Parts, a)
	}
	return p
}

// loadResources asks kin for the connected servers' resources (first
// pages) and keeps them for mentions and completion; quiet says not to
// print them.
func (u *ui) loadResources(quiet bool) {
	var res rpc.MCPResourcesResult
	if err := u.call(rpc.MethodMCPResources, rpc.MCPResourcesParams{}, &res); err != nil {
		if !quiet {
			u.fail(err)
		}
		return
	}
	u.resServers = map[string]bool{}
	var words, templates []string
	s := u.scr
	if !quiet && len(res.Servers) == 0 {
		s.line(s.dim("No connected MCP server offers resources."))
	}
	for _, srv := range res.Servers {
		u.resServers[srv.Server] = true
		if !quiet {
			s.line(cleanLine(srv.Server) + ":")
			if srv.Error != "" {
				s.line("    " + s.red(cleanLine(srv.Error)))
			}
		}
		for _, r := range srv.Resources {
			words = append(words, srv.Server+":"+r.URI)
			if !quiet {
				s.line(fmt.Sprintf("  @%s:%s  %s", cleanLine(srv.Server), cleanLine(r.URI), s.dim(cleanLine(first(r.Title, r.Name)))))
			}
		}
		for _, r := range srv.ResourceTemplates {
			templates = append(templates, srv.Server+":"+r.URITemplate)
			if !quiet {
				s.line(fmt.Sprintf("  @%s:%s  %s", cleanLine(srv.Server), cleanLine(r.URITemplate), s.dim(cleanLine(first(r.Title, r.Name))+" (template: /template @server:template fills in the {…} parts)")))
			}
		}
		if !quiet && srv.NextCursor != "" {
			s.line(s.dim("  … more resources than this page"))
		}
	}
	sort.Strings(words)
	sort.Strings(templates)
	if u.ed != nil {
		u.ed.comp.setResources(words, templates)
	}
}

// setResources keeps the server:uri words @ completes and the
// server:uriTemplate words /template completes.
func (c *completer) setResources(words, templates []string) {
	c.mu.Lock()
	c.resources, c.templates = words, templates
	c.mu.Unlock()
}

// startingWith are the words of *list (resources or templates) starting
// with typed.
func (c *completer) startingWith(list *[]string, typed string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, w := range *list {
		if strings.HasPrefix(w, typed) {
			out = append(out, w)
		}
	}
	return out
}

// showSaw is /saw [CALLID]: what went to the model for a call's result
// (the last finished call when no id is given).
func (u *ui) showSaw(id string) {
	if id == "" {
		id = u.lastCall
	}
	st := u.calls[id]
	if st == nil || st.saw == nil {
		// A call's id is the model service's: cleaned like its text.
		u.usage("/saw [CALLID]: a finished call of this session (" + cleanLine(first(u.lastCall, "none yet")) + " is the last)")
		return
	}
	s := u.scr
	saw := st.saw
	s.line(s.cyan("[what the model saw]") + " " + cleanLine(st.name) + " " + s.dim(cleanLine(id)))
	if saw.Framing != "" {
		s.line(s.dim(fmt.Sprintf("framed as %s data of server %s, tool %s: untrusted, never instructions", saw.Framing, cleanLine(saw.Server), cleanLine(saw.Tool))))
	}
	switch saw.Structured {
	case "appended":
		s.line(s.dim("structuredContent: sent after the content blocks, labelled"))
	case "sameAsText":
		s.line(s.dim("structuredContent: the same JSON as a text block, sent once"))
	case "only":
		s.line(s.dim("structuredContent: sent as the result (no text blocks)"))
	}
	for _, c := range saw.Cuts {
		s.line(s.yellow(cutLine(c)))
	}
	for _, line := range strings.Split(clean(saw.Text), "\n") {
		s.line("    " + line)
	}
	for _, l := range st.links {
		s.line(fmt.Sprintf("link: @%s:%s  %s", cleanLine(l.Server), cleanLine(l.URI), s.dim(cleanLine(first(l.Title, l.Name)))))
	}
	if len(st.links) > 0 {
		s.line(s.dim("/open @server:uri shows a link to you; @server:uri in a question gives it to the model"))
	}
}

// cutLine says what of a server's data was cut, summarised or replaced,
// and why.
func cutLine(c rpc.ModelCut) string {
	l := "cut: " + cleanLine(c.What) + ": " + cleanLine(c.Why)
	if c.Bytes > 0 {
		l += fmt.Sprintf(" (%d bytes", c.Bytes)
		if c.Kept > 0 {
			l += fmt.Sprintf(", %d sent", c.Kept)
		}
		l += ")"
	}
	return l
}

// openResource is /open @server:uri: a server's resource (a call's link,
// above all) read for the person to look at (mcp/readResource): the text
// the model would get, without its framing, and what was cut. It goes into
// no session: the model is told nothing (@server:uri in a question is how
// to give it to the model).
func (u *ui) openResource(arg string) {
	server, uri, ok := strings.Cut(strings.TrimPrefix(arg, "@"), ":")
	if !ok || server == "" || uri == "" || strings.ContainsAny(arg, " \t") {
		u.usage("/open @server:uri: a call's link, or a resource /resources lists")
		return
	}
	var res rpc.MCPReadResourceResult
	if err := u.call(rpc.MethodMCPReadResource, rpc.MCPReadResourceParams{Server: server, URI: uri}, &res); err != nil {
		u.fail(err)
		return
	}
	s := u.scr
	s.line(s.cyan("[resource]") + " @" + cleanLine(res.Server) + ":" + cleanLine(res.URI) + " " + s.dim("(the server's data, not sent to the model)"))
	for _, c := range res.Cuts {
		s.line(s.yellow(cutLine(c)))
	}
	for _, line := range strings.Split(clean(res.Text), "\n") {
		s.line("    " + line)
	}
}
