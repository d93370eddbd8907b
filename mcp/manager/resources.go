package manager

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/calltool"
	"github.com/kin-dev/kin/mcp/catalog"
)

// Resources for the person (issue 24 §4): what a server offers, listed
// for an editor to pick from (mcp/resources), its templates' arguments
// completed (completion/complete), a resource read to be attached to a
// question, and a notice when an attached resource changes. Everything here
// is the server's data: names and titles reach the person stripped of
// invisible characters, contents reach the model framed as untrusted, cut
// at the same sizes as read_mcp_resource, and never with the server's
// secrets.

// Listing limits for the person: one page per request, a page of at most
// maxListed entries (the server's page is cut, saying so).
const (
	maxListed    = 500
	maxIconBytes = 32 << 10
)

// Resource is one resource or resource template a server offers.
type Resource struct {
	Server      string
	URI         string // a resource's
	URITemplate string // a template's
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        int64
	Icons       []Icon
}

// Icon is a server's icon, kept only as a data: URI of a raster image
// (png, jpeg, gif, webp) of at most 32 KiB: an editor showing it fetches
// nothing, so no server learns when the person looks, and no script (SVG)
// reaches a webview.
type Icon struct {
	Src      string
	MIMEType string
	Sizes    []string
	Theme    string
}

// ServerResources is one server's page of resources (and, on its first
// page, all its templates), or why it has none.
type ServerResources struct {
	Server     string
	Resources  []Resource
	Templates  []Resource
	NextCursor string
	Cut        bool   // the server's page was longer than kin lists
	Error      string // redacted
}

// ErrNoResources is returned for a server that is unknown, not connected or
// offers no resources.
var ErrNoResources = errors.New("no such connected MCP server with resources")

// resourceServers are the connected servers that declared resources, by
// name ("" for all).
func (m *Manager) resourceServer(name string) ([]*server, error) {
	var out []*server
	for _, s := range m.sorted() {
		s.mu.Lock()
		ok := s.conn != nil && s.state == StateConnected && s.resources
		s.mu.Unlock()
		if ok && (name == "" || s.cfg.Name == name) {
			out = append(out, s)
		}
	}
	if name != "" && len(out) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNoResources, catalog.Label(name))
	}
	return out, nil
}

// Resources lists one page of resources of server (every connected server
// with resources when ""), from cursor (a cursor is one server's: it needs
// server). Templates come with the first page.
func (m *Manager) Resources(ctx context.Context, server, cursor string) ([]ServerResources, error) {
	if cursor != "" && server == "" {
		return nil, errors.New("a cursor belongs to one server's listing: name the server with it")
	}
	ss, err := m.resourceServer(server)
	if err != nil {
		return nil, err
	}
	out := make([]ServerResources, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.listResources(ctx, cursor))
	}
	return out, nil
}

func (s *server) listResources(ctx context.Context, cursor string) ServerResources {
	r := ServerResources{Server: s.cfg.Name}
	cs, ok := s.Session()
	if !ok {
		r.Error = "not connected"
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout())
	defer cancel()
	res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
	if err != nil {
		r.Error = s.redactErr(err)
		return r
	}
	for _, x := range res.Resources {
		if x == nil {
			continue
		}
		if len(r.Resources) >= maxListed {
			r.Cut = true
			break
		}
		r.Resources = append(r.Resources, s.shown(Resource{URI: x.URI, Name: x.Name, Title: x.Title,
			Description: x.Description, MIMEType: x.MIMEType, Size: x.Size}, x.Icons))
	}
	if res.NextCursor != cursor {
		r.NextCursor = res.NextCursor
	}
	if cursor != "" {
		return r
	}
	tcursor, seen := "", map[string]bool{}
	for page := 0; page < 16 && len(r.Templates) < maxListed; page++ {
		tr, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: tcursor})
		if err != nil {
			if len(r.Templates) == 0 && !isMethodNotFound(err) {
				r.Error = "templates: " + s.redactErr(err)
			}
			break
		}
		for _, x := range tr.ResourceTemplates {
			if x == nil || len(r.Templates) >= maxListed {
				continue
			}
			r.Templates = append(r.Templates, s.shown(Resource{URITemplate: x.URITemplate, Name: x.Name, Title: x.Title,
				Description: x.Description, MIMEType: x.MIMEType}, x.Icons))
		}
		if tr.NextCursor == "" || seen[tr.NextCursor] {
			break
		}
		seen[tr.NextCursor] = true
		tcursor = tr.NextCursor
	}
	return r
}

func isMethodNotFound(err error) bool {
	return strings.Contains(err.Error(), "-32601") || strings.Contains(strings.ToLower(err.Error()), "method not found")
}

// shown makes a server's entry fit to show: labels stripped of invisible
// and control characters and cut, secrets removed, icons kept only as
// small data: images.
func (s *server) shown(r Resource, icons []mcp.Icon) Resource {
	r.Server = s.cfg.Name
	r.URI = s.Redact(catalog.Strip(r.URI))
	r.URITemplate = s.Redact(catalog.Strip(r.URITemplate))
	// redacted before Label cuts them: a secret cut in two no longer matches
	r.Name = catalog.Label(s.Redact(r.Name))
	r.Title = catalog.Label(s.Redact(r.Title))
	r.Description = catalog.Label(s.Redact(r.Description))
	r.MIMEType = catalog.Label(r.MIMEType)
	for _, ic := range icons {
		if i, ok := safeIcon(ic); ok {
			r.Icons = append(r.Icons, i)
		}
	}
	return r
}

var iconTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

func safeIcon(ic mcp.Icon) (Icon, bool) {
	src := ic.Source
	if len(src) > maxIconBytes || !strings.HasPrefix(src, "data:") {
		return Icon{}, false
	}
	head, _, ok := strings.Cut(src[len("data:"):], ",")
	if !ok {
		return Icon{}, false
	}
	mime, _, _ := strings.Cut(head, ";")
	okType := false
	for _, t := range iconTypes {
		okType = okType || strings.EqualFold(mime, t)
	}
	if !okType || !strings.HasSuffix(head, ";base64") {
		return Icon{}, false
	}
	var sizes []string
	for _, z := range ic.Sizes {
		if len(sizes) < 8 {
			sizes = append(sizes, catalog.Label(z))
		}
	}
	theme := string(ic.Theme)
	if theme != "light" && theme != "dark" {
		theme = ""
	}
	return Icon{Src: src, MIMEType: strings.ToLower(mime), Sizes: sizes, Theme: theme}, true
}

// Completion is a server's completions of a template argument.
type Completion struct {
	Values  []string
	Total   int
	HasMore bool
}

// maxCompletions is how many values kin passes on (the specification's
// own maximum per response).
const maxCompletions = 100

// Complete asks server to complete argument arg of the resource template
// uriTemplate, given what is typed (value) and the arguments already
// chosen. A server that offers no completions answers none.
func (m *Manager) Complete(ctx context.Context, server, uriTemplate, arg, value string, chosen map[string]string) (Completion, error) {
	ss, err := m.resourceServer(server)
	if err != nil {
		return Completion{}, err
	}
	if server == "" || uriTemplate == "" || arg == "" {
		return Completion{}, errors.New("server, uriTemplate and argument are required")
	}
	s := ss[0]
	cs, ok := s.Session()
	if !ok {
		return Completion{}, fmt.Errorf("%w: %q", ErrNoResources, server)
	}
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Completions == nil {
		return Completion{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout())
	defer cancel()
	p := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: uriTemplate},
		Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
	if len(chosen) > 0 {
		p.Context = &mcp.CompleteContext{Arguments: chosen}
	}
	res, err := cs.Complete(ctx, p)
	if err != nil {
		return Completion{}, errors.New(s.redactErr(err))
	}
	out := Completion{Total: res.Completion.Total, HasMore: res.Completion.HasMore}
	for _, v := range res.Completion.Values {
		if len(out.Values) >= maxCompletions {
			out.HasMore = true
			break
		}
		out.Values = append(out.Values, s.Redact(catalog.Strip(v)))
	}
	return out, nil
}

// ReadForPerson reads uri from server for a question the person asked:
// the text the model gets (framed as the server's untrusted data, cut as
// read_mcp_resource cuts, secrets removed) and what it saw of it. The
// resource is then watched (subscribed to where the server offers it), so
// the person hears when the attachment goes stale.
func (m *Manager) ReadForPerson(ctx context.Context, server, uri string) (string, *tool.Saw, error) {
	s, body, saw, err := m.read(ctx, server, uri)
	if err != nil {
		return "", nil, err
	}
	out, saw := calltool.FrameSaw(server, "resource", body, saw)
	m.watchResource(ctx, s, uri)
	return out, saw, nil
}

// Read reads uri from server for the person to look at (mcp/readResource):
// the same text ReadForPerson gives the model (each content cut at 32 KiB,
// binary summarised, secrets removed) but without the untrusted framing,
// which is the model's; saw's Cuts say what was cut, summarised or
// replaced. Nothing is subscribed to: the person only looks.
func (m *Manager) Read(ctx context.Context, server, uri string) (string, *tool.Saw, error) {
	_, body, saw, err := m.read(ctx, server, uri)
	return body, saw, err
}

// read is the read both share. The person chose the resource, so nothing
// is asked; a server that asks for input to read is refused (questions are
// answered during tool calls only).
func (m *Manager) read(ctx context.Context, name, uri string) (*server, string, *tool.Saw, error) {
	ss, err := m.resourceServer(name)
	if err != nil {
		return nil, "", nil, err
	}
	if name == "" || uri == "" {
		return nil, "", nil, errors.New("server and uri are required")
	}
	s := ss[0]
	cs, ok := s.Session()
	if !ok {
		return nil, "", nil, fmt.Errorf("%w: %q", ErrNoResources, name)
	}
	rctx, cancel := context.WithTimeout(ctx, s.Timeout())
	defer cancel()
	res, err := cs.ReadResource(rctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, "", nil, fmt.Errorf("reading %s from MCP server %s failed: %s", catalog.Strip(uri), name, s.redactErr(err))
	}
	if res.NeedsInput() {
		return nil, "", nil, fmt.Errorf("MCP server %s asked for input to read %s; kin answers a server's questions only during a tool call", name, catalog.Strip(uri))
	}
	raw, saw := calltool.ResourceText(res.Contents)
	body := s.Redact(raw)
	if body != raw {
		saw = saw.AddCut(tool.Cut{What: "secrets", Why: "a value of the server's configured secrets (headers, environment) was replaced before the model saw it"})
	}
	return s, body, saw, nil
}

// Watched resources: a resource attached to a question is subscribed to
// (where the server offers subscriptions), and its change is a notice.
type watched struct {
	mu   sync.Mutex
	uris map[*mcp.ClientSession]map[string]bool // a connection's subscriptions
	// told are the subscriptions whose change the person was told of:
	// "changed since it was attached, attach it again" is said once per
	// attachment, however often the server repeats it (a server sending
	// notifications/resources/updated in a loop was a notice, a toast in
	// VS Code, for each). Attaching it again clears it.
	told map[*mcp.ClientSession]map[string]bool
}

// SubscribeWait bounds how long reading a resource for a question waits
// for the server to accept the subscription to it.
const SubscribeWait = 5 * time.Second

func (m *Manager) watchResource(ctx context.Context, s *server, uri string) {
	cs, ok := s.Session()
	if !ok {
		return
	}
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil || ir.Capabilities.Resources == nil || !ir.Capabilities.Resources.Subscribe {
		return
	}
	m.watch.mu.Lock()
	if m.watch.uris == nil {
		m.watch.uris = map[*mcp.ClientSession]map[string]bool{}
	}
	if m.watch.uris[cs] == nil {
		m.watch.uris[cs] = map[string]bool{}
	}
	already := m.watch.uris[cs][uri]
	m.watch.uris[cs][uri] = true
	delete(m.watch.told[cs], uri) // attached again: its next change is news
	m.watch.mu.Unlock()
	// The connection may have ended since it was looked up, its entries
	// forgotten (detach) before these were added: forget them again, or
	// they stay for the life of the process.
	if now, ok := s.Session(); !ok || now != cs {
		m.forgetWatch(cs)
		return
	}
	if already {
		return
	}
	// The question waits for this, which only lets kin say later that the
	// attachment went stale: a server that never answers must not hold it
	// for the server's whole timeout (minutes for one configured for long
	// calls, past turn/start's own bound on a resource).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), min(s.Timeout(), SubscribeWait))
	defer cancel()
	if err := cs.Subscribe(sctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		m.watch.mu.Lock()
		delete(m.watch.uris[cs], uri)
		m.watch.mu.Unlock()
		s.m.log.Debug("resource subscription refused")
	}
}

// forgetWatch forgets the subscriptions of a connection that ended, and
// which of their changes the person was told of: nothing more comes on it,
// and the entries (keyed by its session) kept it in memory for as long as
// kin ran, each reconnect adding more. A later connection subscribes anew.
func (m *Manager) forgetWatch(cs *mcp.ClientSession) {
	m.watch.mu.Lock()
	delete(m.watch.uris, cs)
	delete(m.watch.told, cs)
	m.watch.mu.Unlock()
}

// resourceUpdated is the server's notifications/resources/updated: a
// resource attached to a question changed. The notice names it; the model
// is not sent the new content (the person attaches it again).
func (s *server) resourceUpdated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req == nil || req.Params == nil {
		return
	}
	uri := req.Params.URI
	m := s.m
	m.watch.mu.Lock()
	sub := ""
	for u := range m.watch.uris[req.Session] {
		// The update may name a sub-resource of the one subscribed to.
		if u == uri || sub == "" && strings.HasPrefix(uri, strings.TrimSuffix(u, "/")+"/") {
			sub = u
		}
	}
	told := sub != "" && m.watch.told[req.Session][sub]
	if sub != "" && !told {
		if m.watch.told == nil {
			m.watch.told = map[*mcp.ClientSession]map[string]bool{}
		}
		if m.watch.told[req.Session] == nil {
			m.watch.told[req.Session] = map[string]bool{}
		}
		m.watch.told[req.Session][sub] = true
	}
	m.watch.mu.Unlock()
	if sub == "" || told {
		return
	}
	shown := s.Redact(catalog.Strip(uri))
	if hu, ok := m.host.(ResourceHost); ok {
		hu.ResourceUpdated(s.cfg.Name, shown)
		return
	}
	m.host.Notice(LevelInfo, fmt.Sprintf("MCP server %s: %s changed since it was attached; attach it again to give the model the new content.", s.cfg.Name, shown))
}

// ResourceHost is a Host told when a resource attached to a question
// changed (mcp/resourceUpdated); a Host that is not one gets a notice.
type ResourceHost interface {
	ResourceUpdated(server, uri string)
}

// ResourceOwner names the connected server uri belongs to: one that lists
// it on its first page, else one with a template that claims it
// (templateClaims: the web's and files' links only below a whole host or a
// folder the template fixes). "" when none does; the first server by name
// wins.
func (m *Manager) ResourceOwner(ctx context.Context, uri string) string {
	ss, _ := m.resourceServer("")
	var byTemplate string
	for _, s := range ss {
		page := s.listResources(ctx, "")
		for _, r := range page.Resources {
			if r.URI == uri {
				return s.cfg.Name
			}
		}
		for _, t := range page.Templates {
			if byTemplate == "" && templateClaims(t.URITemplate, uri) {
				byTemplate = s.cfg.Name
			}
		}
	}
	return byTemplate
}

// templateClaims says whether a server's resource template claims uri: its
// fixed part (before the first "{") begins uri. A template that fixes only
// its scheme claims that scheme's URIs (notes://{id}), but never the web's
// or files' with less than a whole host or a folder below the root fixed:
// "https://{host}/x", "https://g{x}" or "file:///{path}" would claim every
// link of the web or every file, and a server claiming them is sent the
// links a person attaches and answers their reads.
func templateClaims(template, uri string) bool {
	fixed, _, _ := strings.Cut(template, "{")
	scheme, rest, ok := strings.Cut(fixed, "://")
	if !ok || scheme == "" || !strings.HasPrefix(uri, fixed) {
		return false
	}
	switch scheme {
	case "http", "https":
		host, _, whole := strings.Cut(rest, "/")
		return whole && host != ""
	case "file":
		_, path, _ := strings.Cut(rest, "/")
		dir, _, whole := strings.Cut(path, "/")
		return whole && dir != ""
	}
	return true
}
