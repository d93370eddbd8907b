// Package toolsearch keeps requests short when MCP servers offer many
// tools. Every tool definition costs room in every request; past a budget
// (the toolSearchThreshold setting: by default more than 40 MCP tools, or
// more than 20,000 bytes of their definitions) the MCP tools' definitions
// are deferred: the request offers the built-in search_tools tool and names
// the deferred tools in one line of the instructions. A tool search_tools
// finds (or that the model calls by its listed name) is offered in full
// from the next request on, for the rest of the session in this kin
// process (Found; after a restart, the tools the resumed conversation
// called are seeded from it): a tool the conversation has used stays
// described, and
// the tool list stops changing once the model has what it needs, which
// keeps the service's prompt cache.
//
// What reaches it: tool names and descriptions an MCP server wrote (already
// vetted and labelled by mcp/catalog) and the model's queries. It changes
// nothing and asks nothing: deferring is about what the model is told, not
// what it may do. A deferred tool the model calls by name without a search
// runs exactly as an offered one would (the same approval, grants and
// redefinition checks, which live with the tool); the server validates the
// arguments. The descriptions search_tools returns are framed as the
// servers' untrusted text (agent/boundary's Frame).
//
// Built-in tools (kin's own, the front end's, the MCP resource tools) are
// never deferred: only tools that implement tool.DeferrableTool are.
package toolsearch
