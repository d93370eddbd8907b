package calltool

import (
	"context"
	"fmt"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kin-dev/kin/agent/tool"
	"github.com/kin-dev/kin/mcp/catalog"
)

// MaxInputRounds bounds how many times one call may ask for input.
const MaxInputRounds = 10

// input answers an input-required result (2026-07-28 protocol, multi
// round-trip requests): the server completed the call without acting and
// asks what it needs to go on. Every question it asked goes to the person;
// when all are accepted, the answers are returned for exactly one more
// round, carrying the server's request state. Otherwise stop is the call's
// result and nothing more is sent: a declined or cancelled question ends
// the call denied, a request kin cannot answer (sampling, roots, a server
// that only asks to be called again later, too many rounds) ends it
// failed. The SDK's own retry loop is off (see the manager's dial
// options), so this is the only place a call is sent twice.
func (t *Tool) input(ctx context.Context, env tool.Env, round int, res *mcp.CallToolResult) (mcp.InputResponseMap, *tool.Result) {
	server, name := t.b.Name(), t.def.Name
	fail := func(status tool.Status, why string) *tool.Result {
		msg := fmt.Sprintf("The call to tool %s on MCP server %s was not completed: %s; nothing more was sent.",
			catalog.Label(name), catalog.Label(server), why)
		return &tool.Result{Status: status, Output: msg, Content: []tool.Content{{Type: "text", Text: msg}}}
	}
	switch {
	case len(res.InputRequests) == 0:
		return nil, fail(tool.StatusFailed, "the server asked to be called again later, and kin does not resend calls")
	case round >= MaxInputRounds:
		return nil, fail(tool.StatusFailed, fmt.Sprintf("the server asked for input %d times", round))
	}
	ids := make([]string, 0, len(res.InputRequests))
	for id := range res.InputRequests {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := mcp.InputResponseMap{}
	for _, id := range ids {
		p, ok := res.InputRequests[id].(*mcp.ElicitParams)
		if !ok {
			return nil, fail(tool.StatusFailed, fmt.Sprintf("the server asked for %s, which kin does not offer", inputKind(res.InputRequests[id])))
		}
		ans := t.b.Elicit(ctx, env, p)
		switch {
		case ctx.Err() != nil:
			return nil, fail(tool.StatusDenied, "the turn was cancelled while the server waited for an answer")
		case ans == nil || ans.Action != "accept":
			action := "declined"
			if ans != nil && ans.Action == "cancel" {
				action = "cancelled"
			}
			return nil, fail(tool.StatusDenied, "the person "+action+" the question the server asked for it")
		}
		out[id] = ans
	}
	return out, nil
}

func inputKind(r mcp.InputRequest) string {
	switch r.(type) {
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "a model answer (sampling)"
	case *mcp.ListRootsParams:
		return "the workspace roots"
	}
	return fmt.Sprintf("input of an unknown kind (%T)", r)
}
