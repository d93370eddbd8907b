package agent

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kin-dev/kin/agent/model"
	"github.com/kin-dev/kin/agent/session"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		in, name, args string
		ok             bool
		text           string
	}{
		{in: "/undo", name: "undo", ok: true},
		{in: "/undo t_1", name: "undo", args: "t_1", ok: true},
		{in: "/mode  auto-edit ", name: "mode", args: "auto-edit", ok: true},
		{in: "/everything:args-prompt city=Lisbon", name: "everything:args-prompt", args: "city=Lisbon", ok: true},
		{in: "/usr/bin/env is broken", text: "/usr/bin/env is broken"},
		{in: "/", text: "/"},
		{in: "/ hello", text: "/ hello"},
		{in: "//tmp is full", text: "/tmp is full"},
		{in: "what is /tmp?", text: "what is /tmp?"},
	} {
		name, args, ok, text := ParseCommand(c.in)
		if name != c.name || args != c.args || ok != c.ok || (!ok && text != c.text) {
			t.Errorf("ParseCommand(%q) = %q %q %v %q", c.in, name, args, ok, text)
		}
	}
}

func TestPromptArgs(t *testing.T) {
	two := Prompt{Server: "s", Name: "p", Arguments: []CommandArgument{{Name: "city", Required: true}, {Name: "state"}}}
	one := Prompt{Server: "s", Name: "q", Arguments: []CommandArgument{{Name: "topic"}}}
	for _, c := range []struct {
		p    Prompt
		in   string
		want map[string]string
		bad  bool
	}{
		{p: two, in: "", want: map[string]string{}},
		{p: two, in: "city=Lisbon", want: map[string]string{"city": "Lisbon"}},
		{p: two, in: `state="New York" Albany`, want: map[string]string{"city": "Albany", "state": "New York"}},
		{p: two, in: "Lisbon Portugal", want: map[string]string{"city": "Lisbon", "state": "Portugal"}},
		{p: two, in: "a b c", bad: true},
		{p: two, in: `city="open`, bad: true},
		{p: one, in: "the whole rest, with = signs", want: map[string]string{"topic": "the whole rest, with = signs"}},
		{p: one, in: `topic="quoted words"`, want: map[string]string{"topic": "quoted words"}},
	} {
		got, err := promptArgs(c.p, c.in)
		if (err != nil) != c.bad || (!c.bad && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("promptArgs(%s, %q) = %v, %v", c.p.Name, c.in, got, err)
		}
	}
}

// fakePrompts is an MCP front end's prompts: what GetPrompt was asked is
// kept.
type fakePrompts struct {
	ps  []Prompt
	got []string
}

func (f *fakePrompts) Prompts() []Prompt { return append([]Prompt(nil), f.ps...) }

func (f *fakePrompts) GetPrompt(_ context.Context, server, name string, args map[string]string) (string, error) {
	f.got = append(f.got, server+":"+name)
	return "text of " + server + ":" + name, nil
}

// A session's own servers' prompts (an ACP client's) are its commands
// beside the service's; a name the service's servers took is theirs, and a
// session's prompt is fetched from the session's server.
func TestSessionCommandsAddTheSessionsOwnPrompts(t *testing.T) {
	shared := &fakePrompts{ps: []Prompt{{Server: "docs", Name: "intro"}}}
	own := &fakePrompts{ps: []Prompt{{Server: "docs", Name: "intro"}, {Server: "notes", Name: "today", Description: "Today's notes"}}}
	svc := New(Options{Home: t.TempDir(), Model: model.Config{APIKey: "k", BaseURL: "http://127.0.0.1:1", Model: "m"}, Prompts: shared,
		SessionPrompts: func(id string) Prompts {
			if id == "" {
				t.Error("asked for the prompts of no session")
			}
			return own
		}})
	defer svc.Shutdown()
	opened, err := svc.NewSession(SessionOptions{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	names := func(cs []Command) (out []string) {
		for _, c := range cs {
			if c.Source != "kin" {
				out = append(out, c.Name)
			}
		}
		return out
	}
	if got := names(svc.Commands()); !reflect.DeepEqual(got, []string{"docs:intro"}) {
		t.Errorf("Commands() = %v", got)
	}
	if got := names(svc.SessionCommands(opened.Info.SessionID)); !reflect.DeepEqual(got, []string{"docs:intro", "notes:today"}) {
		t.Errorf("SessionCommands = %v", got)
	}
	for _, in := range []string{"/docs:intro", "/notes:today"} {
		res, err := svc.RunCommand(context.Background(), opened.Info.SessionID, in, nil)
		if err != nil || res.Ask != "text of "+in[1:] {
			t.Errorf("%s: %+v, %v", in, res, err)
		}
	}
	if !reflect.DeepEqual(shared.got, []string{"docs:intro"}) || !reflect.DeepEqual(own.got, []string{"notes:today"}) {
		t.Errorf("fetched from the service's %v and the session's %v", shared.got, own.got)
	}
}

// TestUndoTextNamesTheTurnByItsQuestion: a person reads which turn was
// undone by its question; the raw id only when the question is gone.
func TestUndoTextNamesTheTurnByItsQuestion(t *testing.T) {
	u := session.Undo{TurnID: "t_00000005", Question: "fix the race", Restored: []string{"/ws/cache.go"}}
	if got := UndoText(u); !strings.HasPrefix(got, `Undid "fix the race": restored 1 file`) || strings.Contains(got, "t_00000005") {
		t.Errorf("UndoText = %q", got)
	}
	u.Question = ""
	if got := UndoText(u); !strings.HasPrefix(got, "Undid turn t_00000005: restored 1 file") {
		t.Errorf("UndoText without a question = %q", got)
	}
}

// An undo kin was stopped in (history's item, as kin acp replays it) says
// it is unfinished, not that it restored nothing.
func TestUndoTextOfAnUnfinishedUndo(t *testing.T) {
	u := *session.UnfinishedUndo(&session.Undo{TurnID: "t_00000005", Question: "fix the race"})
	got := UndoText(u)
	if !strings.HasPrefix(got, `Undo of "fix the race" unfinished: kin stopped before this undo finished`) || strings.Contains(got, "restored 0") {
		t.Errorf("UndoText = %q", got)
	}
}
