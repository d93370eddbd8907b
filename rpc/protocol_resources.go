package rpc

// Resources for the person (PROTOCOL.md "MCP resources").
const (
	MethodMCPResources       = "mcp/resources"
	MethodCompletionComplete = "completion/complete"
	MethodMCPReadResource    = "mcp/readResource"
	NotifyMCPResourceUpdated = "mcp/resourceUpdated"
)

// MCPResourcesParams is mcp/resources' params: one server ("": every
// connected server with resources) and, for a later page, the cursor that
// server gave (a cursor needs its server).
type MCPResourcesParams struct {
	Server string `json:"server,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// MCPResourcesResult is mcp/resources' result: a page per server.
type MCPResourcesResult struct {
	Servers []MCPServerResources `json:"servers"`
}

// MCPServerResources is one server's page: its resources, its templates (on
// the first page), the cursor of its next page, whether kin cut the page,
// or why it has none (error, redacted).
type MCPServerResources struct {
	Server            string        `json:"server"`
	Resources         []MCPResource `json:"resources"`
	ResourceTemplates []MCPResource `json:"resourceTemplates,omitempty"`
	NextCursor        string        `json:"nextCursor,omitempty"`
	Cut               bool          `json:"cut,omitempty"`
	Error             string        `json:"error,omitempty"`
}

// MCPResource is a resource (uri) or a resource template (uriTemplate), as
// the server describes it, its texts stripped of invisible characters.
type MCPResource struct {
	URI         string    `json:"uri,omitempty"`
	URITemplate string    `json:"uriTemplate,omitempty"`
	Name        string    `json:"name"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	MimeType    string    `json:"mimeType,omitempty"`
	Size        int64     `json:"size,omitempty"`
	Icons       []MCPIcon `json:"icons,omitempty"`
}

// MCPIcon is a server's icon: only data: URIs of raster images (png, jpeg,
// gif, webp) of at most 32 KiB are passed on, so showing one fetches
// nothing and runs nothing.
type MCPIcon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// CompletionCompleteParams is completion/complete's params, MCP's shape
// with the server named: ref {"type":"ref/resource","uri":TEMPLATE}, the
// argument being typed and the arguments already chosen.
type CompletionCompleteParams struct {
	Server   string             `json:"server"`
	Ref      CompletionRef      `json:"ref"`
	Argument CompletionArgument `json:"argument"`
	Context  *CompletionContext `json:"context,omitempty"`
}

// CompletionRef names the template (type ref/resource, uri its template).
type CompletionRef struct {
	Type string `json:"type"`
	URI  string `json:"uri"`
}

// CompletionArgument is the argument being completed and what is typed.
type CompletionArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompletionContext holds the template's arguments already chosen.
type CompletionContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompletionCompleteResult is completion/complete's result (MCP's shape).
type CompletionCompleteResult struct {
	Completion CompletionValues `json:"completion"`
}

// CompletionValues are at most 100 values, the total the server gave and
// whether there are more.
type CompletionValues struct {
	Values  []string `json:"values"`
	Total   int      `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// MCPResourceUpdated is mcp/resourceUpdated's params: a resource attached
// to a question changed at its server since it was read.
type MCPResourceUpdated struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// MCPReadResourceParams is mcp/readResource's params: the resource the
// person opens (both required).
type MCPReadResourceParams struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// MCPReadResourceResult is mcp/readResource's result: the resource's text
// as the model would get it (each content cut at 32 KiB, binary summarised
// by kind and length, the server's secrets replaced) without the untrusted
// framing, and what was cut, summarised or replaced.
type MCPReadResourceResult struct {
	Server string     `json:"server"`
	URI    string     `json:"uri"`
	Text   string     `json:"text"`
	Cuts   []ModelCut `json:"cuts,omitempty"`
}
