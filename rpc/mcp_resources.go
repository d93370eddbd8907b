package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/kin-dev/kin/agent"
	"github.com/kin-dev/kin/mcp/manager"
)

// The MCP servers' resources for the person: listed and completed for an
// editor's @ completion, read when a question attaches one (an input part
// {"type":"resource","server":S,"uri":U}), and a change of an attached one
// reported (mcp/resourceUpdated).

// handleMCPResources lists a page of resources and templates.
func handleMCPResources(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p MCPResourcesParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	pages, err := m.m.Resources(ctx, p.Server, p.Cursor)
	if err != nil {
		return nil, resourceErr(err)
	}
	out := MCPResourcesResult{Servers: []MCPServerResources{}}
	for _, pg := range pages {
		w := MCPServerResources{Server: pg.Server, Resources: []MCPResource{}, NextCursor: pg.NextCursor, Cut: pg.Cut, Error: pg.Error}
		for _, r := range pg.Resources {
			w.Resources = append(w.Resources, mcpResource(r))
		}
		for _, r := range pg.Templates {
			w.ResourceTemplates = append(w.ResourceTemplates, mcpResource(r))
		}
		out.Servers = append(out.Servers, w)
	}
	return out, nil
}

func mcpResource(r manager.Resource) MCPResource {
	w := MCPResource{URI: r.URI, URITemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MIMEType, Size: r.Size}
	for _, i := range r.Icons {
		w.Icons = append(w.Icons, MCPIcon{Src: i.Src, MimeType: i.MIMEType, Sizes: i.Sizes, Theme: i.Theme})
	}
	return w
}

// handleCompletionComplete completes a resource template's argument.
func handleCompletionComplete(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p CompletionCompleteParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Server == "" || p.Ref.URI == "" || p.Argument.Name == "" {
		return nil, invalid("server, ref.uri and argument.name are required")
	}
	if p.Ref.Type != "ref/resource" {
		return nil, invalid("ref.type must be ref/resource (prompt arguments are completed through commands)")
	}
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	var chosen map[string]string
	if p.Context != nil {
		chosen = p.Context.Arguments
	}
	c, err := m.m.Complete(ctx, p.Server, p.Ref.URI, p.Argument.Name, p.Argument.Value, chosen)
	if err != nil {
		return nil, resourceErr(err)
	}
	values := c.Values
	if values == nil {
		values = []string{}
	}
	return CompletionCompleteResult{Completion: CompletionValues{Values: values, Total: c.Total, HasMore: c.HasMore}}, nil
}

// handleMCPReadResource reads a resource for the person to look at (a
// result's link they open): into no session, subscribing to nothing.
func handleMCPReadResource(ctx context.Context, s *Server, params json.RawMessage) (any, error) {
	var p MCPReadResourceParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Server == "":
		return nil, invalid("server is required")
	case p.URI == "":
		return nil, invalid("uri is required")
	}
	m, err := s.mcpService()
	if err != nil {
		return nil, err
	}
	text, saw, err := m.m.Read(ctx, p.Server, p.URI)
	if err != nil {
		return nil, resourceErr(err)
	}
	out := MCPReadResourceResult{Server: p.Server, URI: p.URI, Text: text}
	if ms := modelSaw(saw); ms != nil {
		out.Cuts = ms.Cuts
	}
	return out, nil
}

func resourceErr(err error) error {
	if errors.Is(err, manager.ErrNoResources) {
		return &jsonrpc2.Error{Code: CodeNotFound, Message: err.Error()}
	}
	return invalid("%s", err.Error())
}

// mcpResources reads the resources questions attach; nil without MCP.
func mcpResources(m *MCPServers) agent.ResourceReader {
	if m == nil {
		return nil
	}
	return m
}

// ReadResource implements agent.ResourceReader: the configured servers'
// resources (every session of kin serve shares them).
func (m *MCPServers) ReadResource(ctx context.Context, _ string, server, uri string) (string, error) {
	text, _, err := m.m.ReadForPerson(ctx, server, uri)
	return text, err
}

// ResourceFront is an MCPFront told when an attached resource changed.
type ResourceFront interface {
	ResourceUpdated(server, uri string)
}

// ResourceUpdated implements manager.ResourceHost.
func (h mcpHost) ResourceUpdated(server, uri string) {
	if f, ok := h.front.(ResourceFront); ok {
		f.ResourceUpdated(server, uri)
		return
	}
	h.front.Notice(manager.LevelInfo, "MCP server "+server+": "+uri+" changed since it was attached; attach it again to give the model the new content.")
}

// ResourceUpdated implements ResourceFront: mcp/resourceUpdated.
func (f serveFront) ResourceUpdated(server, uri string) {
	f.s.notify(NotifyMCPResourceUpdated, MCPResourceUpdated{Server: server, URI: uri})
}

// ResourceOwner names the connected server a URI belongs to ("": none):
// one that lists it, or whose template it fits (kin acp's resource_link
// blocks).
func (m *MCPServers) ResourceOwner(ctx context.Context, uri string) string {
	return m.m.ResourceOwner(ctx, uri)
}
