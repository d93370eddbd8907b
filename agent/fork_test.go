package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// Attack: fork a session at a turn whose call ran as an MCP task a
// restarted kin followed. The fork copied the call and its task record
// but not the result, recorded after a later turn: half a turn. The fork
// showed the call working for ever, told its model that kin follows the
// task (nothing did), and a kin resuming the fork after a restart polled
// the original's task a second time. A result recorded after the cut is
// the call's own and comes along; a call still waiting in the original
// ends unknown in the fork.
func TestAForkTakesACallsLateResultOrClosesIt(t *testing.T) {
	for _, arrived := range []bool{true, false} {
		home := t.TempDir()
		st := session.NewStore(filepath.Join(home, "sessions"))
		info, log, err := st.Create("jobs", []string{t.TempDir()}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		recs := []session.Record{
			{Type: session.TypeUser, TurnID: "t1", Text: "run the job"},
			{Type: session.TypeCall, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Arguments: "{}"},
			{Type: session.TypeDecision, TurnID: "t1", CallID: "j1", Decision: "allow_once"},
			{Type: session.TypeTask, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Server: "jobs", TaskID: "task-1"},
			{Type: session.TypeTurn, TurnID: "t1", Status: "failed", Error: session.StoppedDuringTurn},
			{Type: session.TypeUser, TurnID: "t2", Text: "meanwhile"},
			{Type: session.TypeAssist, TurnID: "t2", Text: "ok"},
			{Type: session.TypeTurn, TurnID: "t2", Status: TurnCompleted},
		}
		if arrived {
			recs = append(recs, session.Record{Type: session.TypeResult, TurnID: "t1", CallID: "j1", Name: "mcp__jobs__job", Status: "completed", Output: "indexed 2 files"})
		}
		for _, r := range recs {
			if _, _, err := log.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if !arrived {
			// Another kin has the original open and follows the task.
			defer log.Close()
		} else {
			log.Close()
		}
		svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: "http://127.0.0.1:1", Model: "mock"},
			Tools: tool.Static(nil), Events: events{done: make(chan TurnDone, 8)}})
		defer svc.Shutdown()
		opened, err := svc.Fork(info.SessionID, "t1", nil)
		if err != nil {
			t.Fatalf("arrived=%v: fork: %v", arrived, err)
		}
		fid := opened.Info.SessionID
		v, err := st.View(fid, session.Query{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if r := v.Repairs(); len(r) != 0 {
			t.Errorf("arrived=%v: the fork leaves open %+v", arrived, r)
		}
		var call session.HistoryItem
		for _, it := range v.Page().Items {
			if it.CallID == "j1" && it.Type == "toolCall" {
				call = it
			}
		}
		want := map[bool]string{true: "completed", false: string(tool.StatusUnknown)}[arrived]
		if call.Status != want {
			t.Errorf("arrived=%v: the fork shows the call %q (%q), want %s", arrived, call.Status, call.Output, want)
		}
		if !arrived && !strings.Contains(call.Output, info.SessionID) {
			t.Errorf("the fork's unknown call does not say whose it is: %q", call.Output)
		}
		svc.mu.Lock()
		sess := svc.sessions[fid]
		svc.mu.Unlock()
		items, err := sess.input(view{budget: ContextBudget})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Kind == model.FunctionOutput && strings.Contains(it.Output, "which kin follows") {
				t.Errorf("arrived=%v: the fork's model is told kin follows the task: %q", arrived, it.Output)
			}
		}
	}
}
