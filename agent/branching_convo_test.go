package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

// A rollback takes its turns' items out of the model's view (calls and
// outputs with them, so no output is left without its call), the sizes
// follow, and a steer is a user message of its turn where it joined.
func TestConvoRollbackAndSteer(t *testing.T) {
	recs := []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "first"},
		{Type: session.TypeAssist, TurnID: "t1", Text: "one"},
		{Type: session.TypeTurn, TurnID: "t1", Status: TurnCompleted},
		{Type: session.TypeUser, TurnID: "t2", Text: "second"},
		{Type: session.TypeCall, TurnID: "t2", CallID: "c1", Name: "read_file", Arguments: `{"path":"a"}`},
		{Type: session.TypeResult, TurnID: "t2", CallID: "c1", Name: "read_file", Status: "completed", Output: strings.Repeat("o", 5000)},
		{Type: session.TypeSteer, TurnID: "t2", Text: "be brief"},
		{Type: session.TypeAssist, TurnID: "t2", Text: "two"},
		{Type: session.TypeTurn, TurnID: "t2", Status: TurnCompleted},
	}
	items := conversationOf(t, recs)
	var kinds []string
	for _, it := range items {
		kinds = append(kinds, fmt.Sprint(it.Kind)+":"+it.Role)
	}
	if last := items[len(items)-2]; last.Role != "user" || !strings.Contains(last.Text, "be brief") || !strings.Contains(last.Text, "added this while you were working") {
		t.Errorf("the steer is not the user message before the answer: %v", kinds)
	}
	c := newConvo()
	for _, r := range recs {
		c.add(r, 0, 0)
	}
	if got, _ := c.lastTurns(2); strings.Join(got, ",") != "t2,t1" {
		t.Errorf("last turns %v", got)
	}
	c.add(session.Record{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t2"}}}, 0, 0)
	out := c.model(nil, view{budget: ContextBudget})
	if len(out) != 2 || out[0].Text != "first" || out[1].Text != "one" {
		t.Errorf("after the rollback the model sees %+v", out)
	}
	fresh := newConvo()
	for _, r := range recs[:3] {
		fresh.add(r, 0, 0)
	}
	if c.size(ContextBudget) != fresh.size(ContextBudget) {
		t.Errorf("size %d after the rollback, %d without the turn", c.size(ContextBudget), fresh.size(ContextBudget))
	}
	if _, have := c.lastTurns(2); have != 1 {
		t.Errorf("%d turns left", have)
	}
	// A file left as it is is said to the model.
	c.add(session.Record{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t1"},
		Undos: []session.Undo{{TurnID: "t1", Conflicts: []session.UndoConflict{{Path: "/w/a.go"}}}}}}, 0, 0)
	out = c.model(nil, view{budget: ContextBudget})
	if len(out) != 1 || out[0].Kind != model.Message || !strings.Contains(out[0].Text, "left as they are: /w/a.go") {
		t.Errorf("after the second rollback %+v", out)
	}
}
