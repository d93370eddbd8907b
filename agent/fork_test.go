package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/tool"
)

// offlineService is a service on home whose model cannot be reached, for
// tests of what kin does with the session logs alone; it shuts down when
// the test ends.
func offlineService(t *testing.T, home string) *Service {
	t.Helper()
	svc := New(Options{Home: home, Model: model.Config{APIKey: "k", BaseURL: "http://127.0.0.1:1", Model: "mock"},
		Tools: tool.Static(nil), Events: events{done: make(chan TurnDone, 8)}})
	t.Cleanup(svc.Shutdown)
	return svc
}

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
		svc := offlineService(t, home)
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

// Attack: kin stopped while a fork copies a long session. The fork was a
// session from its first record on, and its copy grew record by record:
// a kin stopped halfway left a session "… (fork)" holding part of the
// history, cut anywhere (a turn half copied, its end repaired as "kin
// stopped during this turn"), without its fork record (so its copied
// turns counted as its own). Whoever looks at the sessions folder while a
// fork is made must never find such a session.
func TestAForkIsNeverASessionBeforeItIsWhole(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions")
	st := session.NewStore(dir)
	info, log, err := st.Create("long", []string{t.TempDir()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1500; i++ {
		turn := "t" + strconv.Itoa(i)
		for _, r := range []session.Record{
			{Type: session.TypeUser, TurnID: turn, Text: "question " + turn},
			{Type: session.TypeAssist, TurnID: turn, Text: "answer"},
			{Type: session.TypeTurn, TurnID: turn, Status: TurnCompleted},
		} {
			if _, _, err := log.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	log.Close()
	svc := offlineService(t, home)
	done := make(chan error, 1)
	go func() {
		_, err := svc.Fork(info.SessionID, "", nil)
		done <- err
	}()
	looks := 0
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			finished = true
		default:
		}
		names, _ := filepath.Glob(filepath.Join(dir, "s_*.jsonl"))
		for _, name := range names {
			if strings.Contains(name, info.SessionID) {
				continue
			}
			recs, _, err := session.ReadRecords(name)
			if err != nil || len(recs) == 0 {
				continue
			}
			looks++
			forked := false
			for _, r := range recs {
				forked = forked || r.Type == session.TypeFork
			}
			if !forked {
				t.Fatalf("a session holds part of a fork (%d records, no fork record)", len(recs))
			}
		}
	}
	if looks == 0 {
		t.Log("the fork was never seen while it was made")
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, ".*")); len(parts) != 0 {
		t.Errorf("left behind: %v", parts)
	}
	list, err := svc.ListSessions()
	if err != nil || len(list) != 2 {
		t.Fatalf("sessions %d, %v", len(list), err)
	}
	for _, in := range list {
		if in.Turns != 1500 {
			t.Errorf("%s lists %d turns", in.SessionID, in.Turns)
		}
		// The fork holds what the original holds: only its owner reads it.
		if st, err := os.Stat(filepath.Join(dir, in.SessionID+".jsonl")); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", in.SessionID, st.Mode(), err)
		}
	}
}

// Attack: two editor windows, two kins. In one, the person forks a
// session that window never opened. Fork opened the original to read it,
// which took its ownership for as long as that kin ran: the other window
// could then only read the original ("open in another kin"), and the
// fork wrote repairs into the original's log (closing a turn a stopped kin
// left) although the original is only read.
func TestAForkLeavesTheOriginalToOtherKins(t *testing.T) {
	home := t.TempDir()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("original", []string{t.TempDir()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "first"},
		{Type: session.TypeAssist, TurnID: "t1", Text: "one"},
		{Type: session.TypeTurn, TurnID: "t1", Status: TurnCompleted},
		{Type: session.TypeUser, TurnID: "t2", Text: "cut short"}, // a stopped kin left it open
	} {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	path := filepath.Join(home, "sessions", info.SessionID+".jsonl")
	before, _ := os.ReadFile(path)
	one, other := offlineService(t, home), offlineService(t, home)
	opened, err := one.Fork(info.SessionID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if opened.Info.Turns != 1 {
		t.Errorf("the fork has %d turns, want the one that ended", opened.Info.Turns)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the fork wrote into the original's log:\n%s", after[len(before):])
	}
	res, err := other.Resume(info.SessionID, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ReadOnly != nil {
		t.Errorf("the other window gets the original read-only: %v", res.ReadOnly)
	}
}

// Attack: roll back turns t2 and t3 (their files go back), then fork at
// t2. The copy stops right after t2, before the rollback's record: the
// fork's model was told t2's edits were made, on the disk it shares with
// the original, where they had been put back. A turn a rollback took out
// is no place to fork; the turns before it, and a fork of every ended
// turn (which copies the rollback), still are.
func TestAForkAtARolledBackTurnIsRefused(t *testing.T) {
	home := t.TempDir()
	st := session.NewStore(filepath.Join(home, "sessions"))
	info, log, err := st.Create("edits", []string{t.TempDir()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "one"},
		{Type: session.TypeTurn, TurnID: "t1", Status: TurnCompleted},
		{Type: session.TypeUser, TurnID: "t2", Text: "two"},
		{Type: session.TypeTurn, TurnID: "t2", Status: TurnCompleted},
		{Type: session.TypeUser, TurnID: "t3", Text: "three"},
		{Type: session.TypeTurn, TurnID: "t3", Status: TurnCompleted},
		{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t2", "t3"}}},
	} {
		if _, _, err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	log.Close()
	svc := offlineService(t, home)
	for _, turn := range []string{"t2", "t3"} {
		if _, err := svc.Fork(info.SessionID, turn, nil); !errors.Is(err, ErrBadParams) || !strings.Contains(err.Error(), "rolled back") {
			t.Errorf("fork at rolled-back %s: %v, want a bad-params error saying it was rolled back", turn, err)
		}
	}
	for _, turn := range []string{"t1", ""} {
		if _, err := svc.Fork(info.SessionID, turn, nil); err != nil {
			t.Errorf("fork at %q: %v", turn, err)
		}
	}
}
