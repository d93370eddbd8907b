package agent

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

// A call kin still follows as an MCP task after a restart reaches the
// model as working, not unknown; its result, recorded after a later
// question, goes next to its call, so outputs never cross questions.
func TestAFollowedTaskReachesTheModelNextToItsCall(t *testing.T) {
	base := []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "run the job"},
		{Type: session.TypeCall, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Arguments: "{}"},
		{Type: session.TypeDecision, TurnID: "t1", CallID: "j1", Decision: "allow_once"},
		{Type: session.TypeTask, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Server: "jobs", TaskID: "task-7f3a"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "failed", Error: session.StoppedDuringTurn},
		{Type: session.TypeUser, TurnID: "t2", Text: "and?"},
	}
	shape := func(items []model.Item) string {
		var out []string
		for _, it := range items {
			switch it.Kind {
			case model.FunctionOutput:
				out = append(out, "out:"+strings.SplitN(it.Output, " ", 2)[0])
			case model.FunctionCall:
				out = append(out, "call")
			default:
				out = append(out, it.Role)
			}
		}
		return strings.Join(out, ",")
	}
	before := conversationOf(t, base)
	if got := shape(before); got != "user,call,out:[working],user" {
		t.Errorf("while followed: %s", got)
	}
	if !strings.Contains(before[2].Output, "task task-7f3a on MCP server jobs") {
		t.Errorf("working note %q", before[2].Output)
	}
	after := conversationOf(t, append(base, session.Record{Type: session.TypeResult, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Status: "completed", Output: "indexed 2 files"}))
	if got := shape(after); got != "user,call,out:indexed,user" {
		t.Errorf("after its result: %s", got)
	}
}
