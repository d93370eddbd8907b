// Package catalog turns what an MCP server says about its tools into the
// definitions kin offers the model, and decides when a definition changed.
//
//   - List fetches a server's tool list within the discovery limits of spec
//     000 section 4.3 (at most 16 pages and 128 tools, each input schema a
//     JSON object of at most 16 KiB, at most 64 KiB of definitions in all).
//     A server over any limit is an error: nothing of it is registered. A
//     repeated cursor ends pagination.
//   - Names assigns the exposed names mcp__<server>__<tool>: only
//     [a-zA-Z0-9_-], at most 64 characters; a name that is too long, has
//     other characters, is ambiguous (server "a" tool "b__c" and server
//     "a__b" tool "c" both spell mcp__a__b__c) or is taken gets a short
//     deterministic hash suffix instead, so two tools never share a name
//     and a name does not depend on the order servers connect in. Grants
//     are not keyed on these names (see calltool.GrantKey).
//   - Sanitize and Describe build the description the model sees: labelled
//     with its origin, stripped of zero-width and bidi controls, capped, and
//     flagged when it reads like an attempt to override instructions.
//   - Vet combines these, filters by the server's allowed_tools, leaves
//     out a tool whose input schema is not an object schema (a model takes
//     only `"type": "object"` as a function's parameters) and sanitises
//     the texts of the schema (descriptions, titles) like descriptions.
//
// This package must never register a definition it has not vetted, never
// trust a description (it is the server's text, passed on as data), and
// never call a tool.
package catalog
