package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/modeltest"
	"github.com/kin-dev/kin/agent/permission"
	"github.com/kin-dev/kin/agent/session"
	"github.com/kin-dev/kin/agent/settings"
)

// The attack: kin is killed (SIGKILL, power loss, the editor ending it)
// while it rolls a turn back, after it put the turn's files back and
// before it recorded the rollback. The kin that opens the session next
// sent the model the rolled-back turn as done ("I wrote a.txt") over a
// file that is as it was before that turn, and told the person nothing.
// The turns leave the conversation before any file goes back, so a
// killed rollback leaves them out; the person sees in history that the
// rollback did not finish, and the model is told its files may be only
// partly put back.
func TestARollbackKilledAfterPuttingFilesBackLeavesTheTurnsOut(t *testing.T) {
	k := newKillWorld(t)
	svc, sid, target := k.svc, k.sid, k.target
	svc.rollbackRestored = k.keep(t)
	rb, err := svc.Rollback(t.Context(), sid, 1, nil)
	if err != nil || len(rb.Undos) != 1 || len(rb.Undos[0].Restored) != 1 {
		t.Fatalf("rollback %+v, %v", rb, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "before\n" {
		t.Fatalf("a.txt after the rollback: %q", b)
	}
	svc2, m2, rec2 := k.reopen(t)
	r, err := svc2.Resume(sid, ResumeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var shown *session.Rollback
	for _, h := range r.History {
		switch {
		case h.Type == session.TypeRollback:
			shown = h.Rollback
		case h.TurnID == rb.Turns[0] && h.Type == session.TypeUser && !h.RolledBack:
			t.Errorf("history shows the rolled-back question as in the conversation: %+v", h)
		}
	}
	if shown == nil || !slices.Equal(shown.Turns, rb.Turns) || len(shown.Errors) != 1 || !strings.Contains(shown.Errors[0].Error, "kin stopped") {
		t.Errorf("history's rollback item %+v; want the turn, with an error saying kin stopped before the rollback finished", shown)
	}
	m2.Script(modeltest.Reply{Text: []string{"ok"}})
	ask(t, svc2, rec2, sid, TextInput("what is in a.txt?"))
	reqs := m2.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	text := reqs[0].Text()
	if strings.Contains(text, "write a.txt") || strings.Contains(text, "I wrote a.txt") {
		t.Errorf("after the killed rollback the model still sees the rolled-back turn, over a file put back:\n%s", text)
	}
	if !strings.Contains(text, "kin stopped while it put their files back") {
		t.Errorf("the model is not told the rollback may be unfinished:\n%s", text)
	}
}

// What the model is told of a rollback written in two records: while only
// the first is there, that its files may be only partly put back; once
// the outcome comes, the outcome's note alone (none when every file went
// back).
func TestConvoRollbackStartThenOutcome(t *testing.T) {
	base := []session.Record{
		{Type: session.TypeUser, TurnID: "t1", Text: "first"},
		{Type: session.TypeTurn, TurnID: "t1", Status: TurnCompleted},
		{Type: session.TypeUser, TurnID: "t2", Text: "second"},
		{Type: session.TypeTurn, TurnID: "t2", Status: TurnCompleted},
	}
	start := session.Record{Type: session.TypeRollback, Status: session.RollbackStarted, Rollback: &session.Rollback{Turns: []string{"t2"}}}
	notes := func(recs ...session.Record) []string {
		c := newConvo()
		for _, r := range append(slices.Clone(base), recs...) {
			c.add(r, 0, 0)
		}
		var out []string
		for _, it := range c.model(nil, view{budget: ContextBudget}) {
			if it.Text == "second" {
				t.Errorf("the model still sees the rolled-back question")
			}
			if strings.HasPrefix(it.Text, "[kin:") {
				out = append(out, it.Text)
			}
		}
		return out
	}
	if got := notes(start); len(got) != 1 || !strings.Contains(got[0], "kin stopped while it put their files back") {
		t.Errorf("a rollback without its outcome: notes %q", got)
	}
	if got := notes(start, session.Record{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t2"},
		Undos: []session.Undo{{TurnID: "t2", Restored: []string{"/w/a.go"}}}}}); len(got) != 0 {
		t.Errorf("a rollback that put every file back: notes %q", got)
	}
	got := notes(start, session.Record{Type: session.TypeRollback, Rollback: &session.Rollback{Turns: []string{"t2"},
		Undos: []session.Undo{{TurnID: "t2", Conflicts: []session.UndoConflict{{Path: "/w/a.go"}}}}}})
	if len(got) != 1 || !strings.Contains(got[0], "left as they are: /w/a.go") || strings.Contains(got[0], "kin stopped") {
		t.Errorf("a rollback that left a file: notes %q", got)
	}
}

// killWorld is a session whose one turn wrote a.txt over "before\n", for
// killing kin in the middle of putting it back: keep is a hook that keeps
// the session log as it is when called (what is on the disk when kin is
// killed there: the files as put back, and for an undo the checkpoint
// noted undone, the log as it is), and reopen stops this kin, writes that
// log back and starts the next kin on the same home.
type killWorld struct {
	svc               *Service
	m                 *modeltest.Server
	rec               *screen
	home, sid, target string
	logPath           string
	atKill            []byte
}

func newKillWorld(t *testing.T) *killWorld {
	t.Helper()
	home := t.TempDir()
	svc, m, rec, _, ws := limitService(t, home, settings.Limits{})
	target := filepath.Join(ws, "a.txt")
	writeFile(t, target, "before\n")
	s, err := svc.NewSession(SessionOptions{Roots: []string{ws}, Mode: permission.ModeAutoEdit})
	if err != nil {
		t.Fatal(err)
	}
	sid := s.Info.SessionID
	m.Script(
		modeltest.Reply{Calls: []modeltest.Call{{ID: "w1", Name: "write_file", Arguments: `{"path":"a.txt","content":"turn one\n"}`}}},
		modeltest.Reply{Text: []string{"I wrote a.txt"}},
	)
	ask(t, svc, rec, sid, TextInput("write a.txt"))
	return &killWorld{svc: svc, m: m, rec: rec, home: home, sid: sid, target: target, logPath: filepath.Join(home, "sessions", sid+".jsonl")}
}

func (k *killWorld) keep(t *testing.T) func() {
	return func() {
		b, err := os.ReadFile(k.logPath)
		if err != nil {
			t.Error(err)
		}
		k.atKill = b
	}
}

func (k *killWorld) reopen(t *testing.T) (*Service, *modeltest.Server, *screen) {
	t.Helper()
	k.svc.Shutdown()
	if err := os.WriteFile(k.logPath, k.atKill, 0o600); err != nil {
		t.Fatal(err)
	}
	svc, m, rec, _, _ := limitService(t, k.home, settings.Limits{})
	return svc, m, rec
}
