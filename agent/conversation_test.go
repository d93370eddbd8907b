package agent

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

func TestConversationKeepsNewestOutputsWithinBudget(t *testing.T) {
	var recs []session.Record
	recs = append(recs, session.Record{Type: session.TypeUser, Text: "go"})
	big := strings.Repeat("x", 60<<10)
	for i := 0; i < 10; i++ {
		id := string(rune('a' + i))
		recs = append(recs,
			session.Record{Type: session.TypeCall, CallID: id, Name: "read_file"},
			session.Record{Type: session.TypeResult, CallID: id, Status: "completed", Output: big})
	}
	recs = append(recs, session.Record{Type: session.TypeCall, CallID: "dangling", Name: "bash"})
	items := conversation(recs)
	total, elided := 0, 0
	for _, it := range items {
		if it.Kind == model.FunctionOutput {
			total += len(it.Output)
			if strings.Contains(it.Output, "context budget") {
				elided++
			}
		}
	}
	if total > ContextBudget {
		t.Errorf("%d bytes of output sent, budget %d", total, ContextBudget)
	}
	if elided == 0 || strings.Contains(items[len(items)-3].Output, "context budget") {
		t.Errorf("want the oldest outputs elided and the newest kept (elided %d)", elided)
	}
	if items[0].Text != "go" || items[len(items)-1].CallID != "dangling" || !strings.Contains(items[len(items)-1].Output, "[unknown]") {
		t.Errorf("text or the unanswered call changed: %+v", items[len(items)-1])
	}
}
