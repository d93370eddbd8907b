package agent

import (
	"reflect"
	"testing"
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
