package catalog

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits bound what one server may define.
type Limits struct {
	Pages  int // pages of tools/list
	Tools  int // tools in all
	Schema int // bytes of one input schema
	Total  int // bytes of all definitions (names, titles, descriptions, schemas)
}

// DefaultLimits are spec 000's.
var DefaultLimits = Limits{Pages: 16, Tools: 128, Schema: 16 << 10, Total: 64 << 10}

// LimitError says which discovery limit a server exceeded.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// Raw is one tool as the server listed it, with its schema as JSON.
type Raw struct {
	Tool   *mcp.Tool
	Schema json.RawMessage // the input schema, a JSON object
}

// Lister is the part of a ClientSession that List needs.
type Lister interface {
	ListTools(context.Context, *mcp.ListToolsParams) (*mcp.ListToolsResult, error)
}

// List fetches every tool of a server within lim. The listing goes to the
// server each time (connect disables the SDK's cache). A repeated cursor
// ends pagination; a tool listed twice is an error.
func List(ctx context.Context, cs Lister, lim Limits) ([]Raw, error) {
	var out []Raw
	seenCursor := map[string]bool{"": true}
	seenName := map[string]bool{}
	total := 0
	cursor := ""
	for page := 1; ; page++ {
		if page > lim.Pages {
			return nil, &LimitError{fmt.Sprintf("the tool list has more than %d pages", lim.Pages)}
		}
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			if len(out) >= lim.Tools {
				return nil, &LimitError{fmt.Sprintf("the server lists more than %d tools", lim.Tools)}
			}
			if seenName[t.Name] {
				return nil, &LimitError{fmt.Sprintf("the server lists tool %.64q twice", t.Name)}
			}
			seenName[t.Name] = true
			schema, err := schemaJSON(t.InputSchema)
			if err != nil {
				return nil, &LimitError{fmt.Sprintf("tool %.64q: %v", t.Name, err)}
			}
			if len(schema) > lim.Schema {
				return nil, &LimitError{fmt.Sprintf("tool %.64q: its input schema is %d bytes, more than %d", t.Name, len(schema), lim.Schema)}
			}
			total += len(t.Name) + len(t.Title) + len(t.Description) + len(schema)
			if t.Annotations != nil {
				total += len(t.Annotations.Title)
			}
			if total > lim.Total {
				return nil, &LimitError{fmt.Sprintf("the tool definitions exceed %d bytes", lim.Total)}
			}
			out = append(out, Raw{Tool: t, Schema: schema})
		}
		next := res.NextCursor
		if next == "" || seenCursor[next] {
			return out, nil
		}
		seenCursor[next] = true
		cursor = next
	}
}

// schemaJSON marshals an input schema, which must be a JSON object.
func schemaJSON(s any) (json.RawMessage, error) {
	if s == nil {
		return nil, fmt.Errorf("no input schema")
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("input schema: %v", err)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil || obj == nil {
		return nil, fmt.Errorf("the input schema is not a JSON object")
	}
	return b, nil
}
