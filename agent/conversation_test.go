package agent

import (
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

// conversationOf writes recs to a real log and rebuilds the model's view
// from it, outputs read back by offset as a resumed session does.
func conversationOf(t *testing.T, recs []session.Record) []model.Item {
	t.Helper()
	st := session.NewStore(t.TempDir())
	_, log, err := st.Create("", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range recs {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	c := newConvo()
	if err := log.Each(c.add); err != nil {
		t.Fatal(err)
	}
	return c.model(log.ReadAt)
}

func TestConversationKeepsNewestOutputsWithinBudget(t *testing.T) {
	var recs []session.Record
	recs = append(recs, session.Record{Type: session.TypeUser, Text: "go"})
	big := strings.Repeat("x", 60<<10)
	for i := 0; i < 10; i++ {
		id := string(rune('a' + i))
		recs = append(recs,
			session.Record{Type: session.TypeCall, CallID: id, Name: "read_file"},
			session.Record{Type: session.TypeResult, CallID: id, Status: "completed", Output: big + id})
	}
	recs = append(recs, session.Record{Type: session.TypeCall, CallID: "dangling", Name: "bash"})
	items := conversationOf(t, recs)
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
	if elided == 0 || items[len(items)-3].Output != big+"j" {
		t.Errorf("want the oldest outputs elided and the newest read back whole (elided %d)", elided)
	}
	if items[0].Text != "go" || items[len(items)-1].CallID != "dangling" || !strings.Contains(items[len(items)-1].Output, "[unknown]") {
		t.Errorf("text or the unanswered call changed: %+v", items[len(items)-1])
	}
}

func TestConversationJoinsAnAnswersPiecesAndNotesATurnWithoutAnswer(t *testing.T) {
	items := conversationOf(t, []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "deploy"},
		{Type: session.TypeTurn, TurnID: "t1", Status: "failed", Error: session.StoppedDuringTurn},
		{Type: session.TypeUser, TurnID: "t2", Text: "again"},
		{Type: session.TypeAssist, TurnID: "t2", Text: "Hel"},
		{Type: session.TypeAssist, TurnID: "t2", Text: "lo", Cont: true},
		{Type: session.TypeTurn, TurnID: "t2", Status: "completed"},
	})
	var got []string
	for _, it := range items {
		got = append(got, it.Role+":"+it.Text)
	}
	want := []string{"user:deploy", "assistant:[no answer: this turn ended failed: kin stopped during this turn]", "user:again", "assistant:Hello"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("conversation\n got %q\nwant %q", got, want)
	}
}
